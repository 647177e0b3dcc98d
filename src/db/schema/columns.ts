import { sql } from 'drizzle-orm';
import { timestamp } from 'drizzle-orm/pg-core';

/** Timestamps are stored with time zone and millisecond precision, as the interface shows them. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * The time a column's default stamps: `sealpay_now()` (migration 0013), real time plus the sandbox test clock's
 * offset, so a row left to its default is dated on the service's clock (`Deps.clock`).
 */
export const serviceNow = sql`sealpay_now()`;

export const createdAt = () => ts('created_at').notNull().default(serviceNow);
export const updatedAt = () => ts('updated_at').notNull().default(serviceNow);
