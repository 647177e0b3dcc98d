/**
 * A background loop that drains a queue in rounds: a round that did work is followed at once by the next; an idle
 * one waits `pollMs`, or less when `signal` says work was queued (in this process or, on PostgreSQL, another).
 * The email and webhook deliveries run on it beside the worker.
 */

import type { WorkQueue, WorkSignal } from '../db/work-signal.ts';
import type { Logger } from '../lib/logger.ts';

export interface PollingLoopOptions {
  /** One round: returns how many items it handled (0: nothing was due). */
  round: () => Promise<number>;
  pollMs: number;
  /** Wakes an idle loop early; a notification during a round starts the next round at once. */
  signal?: { source: WorkSignal; queue: WorkQueue };
  logger: Logger;
  /** Logged with the error when a round throws (the loop goes on after its wait). */
  failureMessage: string;
}

/** Starts the loop; returns the function that stops it (after the round under way). */
export function startPollingLoop(options: PollingLoopOptions): () => Promise<void> {
  let stopped = false;
  let wake: (() => void) | null = null;
  let notified = false;
  const unsubscribe =
    options.signal?.source.subscribe(options.signal.queue, () => {
      if (wake) wake();
      else notified = true;
    }) ?? (() => {});
  const loop = (async () => {
    while (!stopped) {
      const handled = await options.round().catch((error: unknown) => {
        options.logger.error({ err: error }, options.failureMessage);
        return 0;
      });
      if (handled > 0 || notified) {
        notified = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return async () => {
    stopped = true;
    (wake as (() => void) | null)?.();
    unsubscribe();
    await loop;
  };
}
