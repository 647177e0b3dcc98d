import { bigint, jsonb, pgTable, primaryKey, smallint, text } from 'drizzle-orm/pg-core';

/** The lists whose totals are kept in `list_totals`. */
export const COUNTED_LISTS = ['transactions', 'letters'] as const;
export type CountedList = (typeof COUNTED_LISTS)[number];

/**
 * How many rows of a list an account has, per combination of the list's filter values (`key`, e.g.
 * `{"walletId": …, "type": "TRANSFER", "status": "PENDING"}`): a list's `total` for any filter is the sum of the
 * rows whose key contains it, whatever the number of rows counted. Kept by statement triggers on the counted
 * tables (migration 0004), in the same database transaction as the change; no code path writes it. `slot` (0-7,
 * from the counted row's id) spreads one key over eight rows, so concurrent status moves of different rows rarely
 * wait on one counter row.
 */
export const listTotals = pgTable(
  'list_totals',
  {
    list: text('list', { enum: COUNTED_LISTS }).notNull(),
    userId: text('user_id').notNull(),
    key: jsonb('key').$type<Record<string, string>>().notNull(),
    slot: smallint('slot').notNull(),
    count: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ name: 'list_totals_pkey', columns: [t.list, t.userId, t.key, t.slot] })],
);
