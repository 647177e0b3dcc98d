import { timestamp } from 'drizzle-orm/pg-core';

/** Timestamps are stored with time zone and millisecond precision, as the interface shows them. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const createdAt = () => ts('created_at').notNull().defaultNow();
export const updatedAt = () => ts('updated_at').notNull().defaultNow();
