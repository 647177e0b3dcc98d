import { sql } from 'drizzle-orm';
import { bigint, check, pgTable, smallint } from 'drizzle-orm/pg-core';
import { ts } from './columns.ts';

/**
 * The sandbox's test clock (migration 0013): one row, the offset in seconds added to real time by every process
 * of a deployment (`src/db/test-clock.ts`) and by `sealpay_now()`, the default of every timestamp column. It only
 * grows; in production it stays 0.
 */
export const testClock = pgTable(
  'test_clock',
  {
    id: smallint('id').primaryKey().default(1),
    offsetSeconds: bigint('offset_seconds', { mode: 'number' }).notNull().default(0),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('test_clock_single_row', sql`${t.id} = 1`),
    check('test_clock_offset_forward', sql`${t.offsetSeconds} >= 0`),
  ],
);
