/**
 * The one lease query of the service's queues (the worker's transactions, the email outbox, the webhook
 * deliveries): takes up to `limit` due rows of a table in one statement and answers them as rows of that table.
 * `FOR UPDATE SKIP LOCKED`: two workers never take the same row. A row stays leased until `lease_until`: a worker
 * killed mid-step leaves a lease that runs out, and the row is taken again.
 */
import { type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { type DbOrTx, tableRows } from './client.ts';

export interface LeaseQuery {
  /** What taking a row writes, besides nothing else: `lease_until = …` and whatever the queue counts. */
  set: SQL;
  /**
   * Which rows are due, on the alias `q` of the table. A row whose lease still runs at `now` is never due (added
   * here, not by the caller).
   */
  due: SQL;
  /** In which order due rows are taken, on the alias `q`. */
  orderBy: SQL;
  now: Date;
  limit: number;
}

/** Leases due rows of `table` (it has `id` and `lease_until` columns); the rows as they are after the lease. */
export function leaseDue<T extends PgTable>(
  db: DbOrTx,
  table: T,
  lease: LeaseQuery,
): Promise<T['$inferSelect'][]> {
  return tableRows(
    db,
    table,
    sql`update ${table} set ${lease.set}
        where id in (
          select q.id from ${table} q
          where ${lease.due}
            and (q.lease_until is null or q.lease_until < ${lease.now.toISOString()})
          order by ${lease.orderBy}
          limit ${lease.limit}
          for update of q skip locked)
        returning *`,
  );
}
