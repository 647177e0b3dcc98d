import { LETTER_STATE } from '../../adapters/chain/contracts.ts';
import { readLetter } from '../../adapters/confidential/helpers.ts';
import type { Deps } from '../../deps.ts';
import type { Logger } from '../../lib/logger.ts';
import { requireNetwork } from '../network/network.service.ts';
import {
  findExpiredLetters,
  findLettersWithFailedRefund,
  findUnsettledLetters,
  moveLetter,
  updateLetter,
} from './letters.repository.ts';
import { expireLetter, refundLetter } from './letters.service.ts';

/** Letters one run of the sweep takes up, per kind of work. */
const SWEEP_BATCH = 200;

/**
 * The operator's sweep: expires and refunds letters past `expiresAt`, re-queues refunds that failed, and settles
 * letters whose leg finished while nobody was watching. Safe to run from several processes at once.
 */
export async function sweepLetters(
  deps: Deps,
): Promise<{ expired: number; refunded: number; reconciled: number }> {
  const { db } = deps.database;
  const now = deps.clock.now();
  let expired = 0;
  let refunded = 0;
  let reconciled = 0;
  for (const letter of await findExpiredLetters(db, now, SWEEP_BATCH)) {
    if (await expireLetter(deps, letter)) expired += 1;
  }

  const failedRefunds = await findLettersWithFailedRefund(db, SWEEP_BATCH);
  const network = requireNetwork(deps);
  for (const letter of failedRefunds) {
    const onChain = await readLetter(network, letter.vaultLetterId);
    if (onChain.state !== LETTER_STATE.Escrowed) {
      await updateLetter(db, letter.id, {
        needsReview: true,
        error: 'The refund failed and the vault no longer holds the letter.',
      });
      continue;
    }
    if (
      await refundLetter(
        deps,
        letter,
        [letter.status as 'VOIDED' | 'EXPIRED'],
        letter.status as 'VOIDED' | 'EXPIRED',
        letter.refundReason ?? 'voided',
      )
    ) {
      refunded += 1;
    }
  }

  const unsettled = await findUnsettledLetters(db, SWEEP_BATCH);
  for (const { letter, leg } of unsettled) {
    const confirmed = leg.status === 'CONFIRMED';
    const moved =
      letter.status === 'DRAFT'
        ? await moveLetter(
            db,
            letter.id,
            ['DRAFT'],
            confirmed ? { status: 'ESCROWED' } : { status: 'FAILED', error: leg.error },
          )
        : await moveLetter(
            db,
            letter.id,
            ['CLAIMING'],
            confirmed
              ? { status: 'CLAIMED', claimedAt: leg.updatedAt, claimCodeSealed: null }
              : {
                  status: letter.claimableStatus ?? 'ESCROWED',
                  claimantUserId: null,
                  claimantWalletId: null,
                  claimantAddress: null,
                  claimTransactionId: null,
                },
          );
    if (moved) reconciled += 1;
  }
  return { expired, refunded, reconciled };
}

export type SweepCounts = Awaited<ReturnType<typeof sweepLetters>>;

export interface LetterSweeperOptions {
  /** The pause between the end of one run and the start of the next. */
  intervalMs?: number;
  /** The work of one run (tests pass a slow or failing one). */
  sweep?: (deps: Deps) => Promise<SweepCounts>;
}

/**
 * The sweep on a timer inside the service (every worker process runs it; the guarded updates make that safe).
 * The next run is scheduled only when the previous one has finished, so a run slower than the interval never
 * overlaps the next one; a failed run is logged and the timer goes on. Stopping waits for the run in progress.
 */
export function startLetterSweeper(
  deps: Deps,
  logger: Logger,
  options: LetterSweeperOptions = {},
): () => Promise<void> {
  const { intervalMs = 60_000, sweep = sweepLetters } = options;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const schedule = () => {
    timer = setTimeout(() => {
      running = sweep(deps)
        .then((counts) => {
          if (counts.expired + counts.refunded + counts.reconciled > 0) logger.info(counts, 'letter sweep');
        })
        .catch((error: unknown) => logger.error({ err: error }, 'letter sweep failed'))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
