import { doublePrecision, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from './columns.ts';

/**
 * The operator's periodic jobs (the reconciliation): one row per job. A worker takes a run with a guarded upsert
 * of `startedAt` (only when the last run started an interval ago), so several workers run it once per interval;
 * the last run's findings stay here for `/metrics` in any process.
 */
export const operationsRuns = pgTable('operations_runs', {
  name: text('name').primaryKey(),
  startedAt: ts('started_at').notNull(),
  checkedAt: ts('checked_at'),
  differences: integer('differences'),
  /** Null when the operator spent no gas over the last 7 days (it lasts indefinitely at that rate). */
  operatorGasDaysLeft: doublePrecision('operator_gas_days_left'),
});

export type OperationsRunRow = typeof operationsRuns.$inferSelect;
