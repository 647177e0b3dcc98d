/**
 * The faults the sandbox's magic amounts (src/lib/sandbox-triggers.ts) make happen inside the worker and the
 * inline driver: a pre-flight refusal, a run of transient faults, a settlement held past the blocking budget. Only
 * on the sandbox networks; in production no amount triggers anything.
 */
import type { TransactionRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import { type SandboxTrigger, sandboxTriggerOf } from '../lib/sandbox-triggers.ts';
import { PreflightError } from './submissions.ts';

/** How long `…429` keeps faulting, from the row's creation. */
export const SANDBOX_TRANSIENT_MS = 30_000;

/** A transient fault that says when it ends: the row's next attempt is then, not on the backoff schedule. */
export class SandboxFault extends Error {
  readonly until: Date;
  constructor(message: string, until: Date) {
    super(message);
    this.name = 'SandboxFault';
    this.until = until;
  }
}

/** The trigger of the row's amount in the sandbox; null in production and for an ordinary amount. */
export function sandboxTrigger(deps: Deps, row: TransactionRow): SandboxTrigger | null {
  if (deps.config.environment !== 'sandbox' || row.amount === null) return null;
  return sandboxTriggerOf(BigInt(row.amount));
}

/** Whether the worker's sandbox pre-flight has something to do with this row (it then goes alone, never batched). */
export function hasSandboxPreflight(deps: Deps, row: TransactionRow): boolean {
  const trigger = sandboxTrigger(deps, row);
  // Only a type a client queues directly (`/fund`, `/mint`, `/transfer`, `/redeem`): those `…402` and `…429` act on.
  return deps.operations[row.type].queue !== undefined && (trigger === 'fail' || trigger === 'transient');
}

/**
 * The worker's pre-flight for the magic amounts of `/fund`, `/mint`, `/transfer` and `/redeem`, before the row's
 * operation signs anything: `…402` is refused (FAILED with the operation's own code), `…429` faults transiently
 * until 30 s after the row's creation (by the service's clock), then the row runs as any other.
 */
export function sandboxPreflight(deps: Deps, row: TransactionRow): void {
  if (!hasSandboxPreflight(deps, row) || row.status !== 'QUEUED' || row.step !== 'start') return;
  const amount = 'the sandbox test amount';
  if (sandboxTrigger(deps, row) === 'fail') {
    throw new PreflightError(`Refused by ${amount} ending in 402: nothing moved.`);
  }
  const until = new Date(row.createdAt.getTime() + SANDBOX_TRANSIENT_MS);
  if (deps.clock.now() < until) {
    throw new SandboxFault(
      `A transient fault made by ${amount} ending in 429, until ${until.toISOString()}.`,
      until,
    );
  }
}

/**
 * `…505`: a letter's escrow, broadcast, has its settlement held until `afterMs` past the row's creation (past the
 * inline driver's blocking budget), so the creation answers `502 escrow_unsettled` and the worker finishes it.
 */
export function holdSandboxEscrow(deps: Deps, row: TransactionRow, afterMs: number): void {
  if (row.type !== 'LETTER_ESCROW' || sandboxTrigger(deps, row) !== 'escrow_unsettled') return;
  const until = new Date(row.createdAt.getTime() + afterMs);
  if (deps.clock.now() < until) {
    throw new SandboxFault(
      `The escrow's settlement is held by the sandbox test amount ending in 505.`,
      until,
    );
  }
}
