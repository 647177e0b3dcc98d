import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { rows } from '../db/client.ts';
import { chainSubmissions, transactions } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { newId } from '../lib/ids.ts';
import type { TransactionRow } from '../modules/transactions/transactions.repository.ts';
import { FAILURE_CODE, fail, type OperationContext, runners } from './operations.ts';
import { PreflightError, RevertedError } from './submissions.ts';

const MAX_BACKOFF_MS = 60_000;
const HOUR_MS = 3_600_000;

/** Pre-flight codes that are the transaction's errorCode as they are (the rest map to the type's failure code). */
const OWN_CODES = new Set(['escrow_vault_underfunded', 'faucet_cap_exceeded']);

type Logger = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

function backoffMs(attempts: number): number {
  const base = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempts, 16));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** Claims up to `limit` runnable rows with a lease (SKIP LOCKED: several workers never take the same row). */
export async function claimRows(deps: Deps, owner: string, limit: number): Promise<TransactionRow[]> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.worker.leaseMs);
  const claimed = await rows<{ id: string }>(
    deps.database.db,
    sql`update transactions set lease_owner = ${owner}, lease_until = ${leaseUntil.toISOString()}
        where id in (
          select id from transactions
          where status in ('QUEUED', 'PENDING', 'SETTLING')
            and next_attempt_at <= ${now.toISOString()}
            and (lease_until is null or lease_until < ${now.toISOString()})
          order by next_attempt_at
          limit ${limit}
          for update skip locked)
        returning id`,
  );
  if (claimed.length === 0) return [];
  const ids = claimed.map((row) => row.id);
  return deps.database.db.select().from(transactions).where(inArray(transactions.id, ids));
}

/** Takes the lease of one row (a request driving its own letter leg inline); undefined when someone holds it. */
export async function claimRow(deps: Deps, id: string, owner: string): Promise<TransactionRow | undefined> {
  const now = deps.clock.now();
  const [row] = await deps.database.db
    .update(transactions)
    .set({ leaseOwner: owner, leaseUntil: new Date(now.getTime() + deps.config.worker.leaseMs) })
    .where(
      and(
        eq(transactions.id, id),
        sql`${transactions.status} in ('QUEUED', 'PENDING', 'SETTLING')`,
        sql`(${transactions.leaseUntil} is null or ${transactions.leaseUntil} < ${now.toISOString()} or ${transactions.leaseOwner} = ${owner})`,
      ),
    )
    .returning();
  return row;
}

async function movedAnything(deps: Deps, id: string): Promise<boolean> {
  // The operator's gas top-up and an ERC-20 approval move none of the client's funds.
  const [row] = await deps.database.db
    .select({ id: chainSubmissions.id })
    .from(chainSubmissions)
    .where(
      and(eq(chainSubmissions.transactionId, id), notInArray(chainSubmissions.purpose, ['gas', 'approve'])),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * Advances one leased row as far as it can go now. Transient faults are retried later with backoff, never shown;
 * FAILED is written only when nothing moved.
 */
export async function processRow(deps: Deps, row: TransactionRow, logger: Logger): Promise<void> {
  const network = deps.network;
  if (!network) throw new Error('the worker needs the chain');
  const runner = runners[row.type];
  const ctx: OperationContext = { deps, network };
  const { db } = deps.database;
  // The lease is renewed while the row is driven, so a slow chain (a receipt wait) never lets a second worker
  // take a row that is still in hand.
  const { leaseMs } = deps.config.worker;
  const renewal = setInterval(() => {
    db.update(transactions)
      .set({ leaseUntil: new Date(deps.clock.now().getTime() + leaseMs) })
      .where(and(eq(transactions.id, row.id), eq(transactions.leaseOwner, row.leaseOwner ?? '')))
      .catch((error: unknown) => logger.warn({ transactionId: row.id, err: error }, 'lease renewal failed'));
  }, leaseMs / 3);
  renewal.unref();
  try {
    if (!runner) throw new Error(`no runner for ${row.type}`);
    await runner(ctx, row);
    await db
      .update(transactions)
      .set({ leaseOwner: null, leaseUntil: null })
      .where(and(eq(transactions.id, row.id), eq(transactions.leaseOwner, row.leaseOwner ?? '')));
  } catch (error) {
    const nothingMoved = !(await movedAnything(deps, row.id).catch(() => true));
    if (error instanceof RevertedError || (error instanceof PreflightError && nothingMoved)) {
      logger.warn(
        { transactionId: row.id, type: row.type, reason: (error as Error).message },
        'transaction failed',
      );
      const code =
        error instanceof PreflightError && OWN_CODES.has(error.code) ? error.code : FAILURE_CODE[row.type];
      await fail(ctx, row, code, (error as Error).message);
      return;
    }
    const attempts = row.attempts + 1;
    // Transient faults (an RPC or relayer outage) are retried without surfacing for the configured horizon from the
    // row's creation; past it, a row that never got past pre-flight is failed so it does not wait forever. A row
    // that signed anything that moves funds is never failed here: its fate is on the chain, not in the fault.
    const retryUntil = row.createdAt.getTime() + deps.config.worker.transientRetryHours * HOUR_MS;
    if (nothingMoved && row.status === 'QUEUED' && deps.clock.now().getTime() >= retryUntil) {
      logger.error(
        { transactionId: row.id, attempts, err: error },
        'transaction failed: transient faults outlasted the retry horizon before submission',
      );
      await fail(
        ctx,
        row,
        FAILURE_CODE[row.type],
        `The operation could not be submitted within ${deps.config.worker.transientRetryHours} hours (the network ` +
          'or the relayer kept failing); nothing moved. Try again.',
      );
      return;
    }
    logger.warn({ transactionId: row.id, attempts, err: error }, 'transient fault; will retry');
    // Guarded by the lease like the success path: a worker whose lease was taken over (it stalled past LEASE_MS)
    // must not reschedule or release a row the new owner is driving.
    await db
      .update(transactions)
      .set({
        attempts,
        nextAttemptAt: new Date(deps.clock.now().getTime() + backoffMs(attempts)),
        leaseOwner: null,
        leaseUntil: null,
      })
      .where(and(eq(transactions.id, row.id), eq(transactions.leaseOwner, row.leaseOwner ?? '')));
  } finally {
    clearInterval(renewal);
  }
}

/**
 * The embedded database is opened by one process at a time, so at start every lease in it belongs to a process
 * that is gone (kill -9, power loss): release them now instead of leaving the rows stalled for the lease (WORKER_LEASE_MS). On
 * PostgreSQL other live workers may hold leases, which expire on their own.
 */
export async function releaseOrphanedLeases(deps: Deps): Promise<number> {
  if (deps.database.kind !== 'pglite') return 0;
  const released = await deps.database.db
    .update(transactions)
    .set({ leaseOwner: null, leaseUntil: null })
    .where(sql`${transactions.leaseOwner} is not null`)
    .returning({ id: transactions.id });
  return released.length;
}

/** The worker loop: claim, run up to `concurrency` rows at once, repeat; stops cleanly on demand. */
export async function startWorker(deps: Deps, logger: Logger): Promise<() => Promise<void>> {
  const owner = `worker-${newId()}`;
  const orphaned = await releaseOrphanedLeases(deps);
  if (orphaned > 0) logger.warn({ released: orphaned }, 'released leases left by a previous process');
  const { concurrency, pollMs } = deps.config.worker;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let wake: (() => void) | null = null;
  // A notification that arrives while the loop is claiming is kept for the next round rather than lost.
  let notified = false;
  // Requests notify when they queue work (deps.workSignal, across processes on PostgreSQL): no waiting for a poll.
  const unsubscribe = deps.workSignal.subscribe(() => {
    if (wake) wake();
    else notified = true;
  });

  const loop = (async () => {
    while (!stopped) {
      const room = concurrency - inFlight.size;
      let claimed: TransactionRow[] = [];
      if (room > 0) {
        claimed = await claimRows(deps, owner, room).catch((error: unknown) => {
          logger.error({ err: error }, 'claiming work failed');
          return [];
        });
        for (const row of claimed) {
          const task = processRow(deps, row, logger)
            .catch((error: unknown) =>
              logger.error({ err: error, transactionId: row.id }, 'worker task crashed'),
            )
            .finally(() => {
              inFlight.delete(task);
              wake?.();
            });
          inFlight.add(task);
        }
      }
      if (claimed.length > 0 && claimed.length === room) continue;
      if (notified) {
        notified = false;
        if (room > 0) continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();

  logger.info({ owner, concurrency }, 'worker started');
  return async () => {
    stopped = true;
    wake?.();
    unsubscribe();
    await loop;
    await Promise.allSettled([...inFlight]);
  };
}
