/** The sandbox's test clock, read and moved by the operator (`/sandbox/clock`). */
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';

/** The most one call moves the clock: 400 days. */
export const MAX_ADVANCE_SECONDS = 400 * 86_400;

export interface TestClockView {
  now: Date;
  offsetSeconds: number;
}

function testClockOf(deps: Deps) {
  // The route answers 404 in production before this; a service called from elsewhere refuses the same way.
  if (!deps.testClock)
    throw new AppError('not_found', 'Not found: the test clock exists in the sandbox only.');
  return deps.testClock;
}

/** The clock now, as every part of the service reads it (after another process's move, within a second). */
export async function readTestClock(deps: Deps): Promise<TestClockView> {
  const clock = testClockOf(deps);
  await clock.refresh();
  return { now: clock.now(), offsetSeconds: clock.offsetSeconds };
}

/**
 * Moves the clock forward by `seconds` (1 to 400 days' worth) for every process of the deployment; it never moves
 * back. Letters past their expiry, keys and sessions past theirs, rate-limit and faucet windows, and retry schedules
 * all follow; TOTP windows and webhook signatures stay on real time.
 */
export async function advanceTestClock(deps: Deps, seconds: number): Promise<TestClockView> {
  const clock = testClockOf(deps);
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
    throw new AppError(
      'validation_error',
      `advanceSeconds must be a whole number from 1 to ${MAX_ADVANCE_SECONDS}.`,
    );
  }
  await clock.advance(seconds);
  // Rows the worker backs off (a retry, a webhook delivery) are due on the new time: wake it up to see them.
  deps.workSignal.notify('transactions');
  return { now: clock.now(), offsetSeconds: clock.offsetSeconds };
}
