import { Type } from '@sinclair/typebox';
import { Timestamp } from '../../http/envelope.ts';
import { MAX_ADVANCE_SECONDS } from './clock.service.ts';

/** `POST /sandbox/clock`: how far to move the test clock forward. */
export const AdvanceClockBody = Type.Object(
  {
    advanceSeconds: Type.Integer({
      minimum: 1,
      maximum: MAX_ADVANCE_SECONDS,
      description: 'Seconds to move the clock forward: 1 to 400 days’ worth (34,560,000) per call.',
    }),
  },
  { additionalProperties: false },
);

/** The test clock as the service reads it. */
export const TestClock = Type.Object(
  {
    now: Timestamp,
    offsetSeconds: Type.Integer({
      description: 'How far the clock runs ahead of real time; it never decreases.',
    }),
  },
  { title: 'TestClock' },
);

/** The magic amounts of `/fund`, `/mint`, `/transfer` and `/redeem`, for their OpenAPI descriptions. */
export const QUEUED_MAGIC_AMOUNTS =
  ' Sandbox magic amounts (`local`, `devnet`; ordinary amounts in production), by the last three of the six ' +
  'decimals, the whole amount moved: `…402` goes QUEUED → FAILED with this operation’s own `errorCode`, nothing ' +
  'moved; `…429` meets transient faults for 30 s (the row stays QUEUED), then completes.';

/** The magic amounts of a letter's creation, for its OpenAPI description. */
export const LETTER_MAGIC_AMOUNTS =
  ' Sandbox magic amounts (`local`, `devnet`; ordinary amounts in production), by the last three of the six ' +
  'decimals, the whole amount escrowed: `…505` answers `502 escrow_unsettled` (`details: {letterId, txHash}`) and ' +
  'the letter reads ESCROWED soon after; `…502`, `…503` and `…504` act on its claim (see `claimLetter`).';

/** The magic amounts of a letter's claim, for its OpenAPI description. */
export const CLAIM_MAGIC_AMOUNTS =
  ' Sandbox magic amounts of the letter (`local`, `devnet`; ordinary in production), by the last three of the six ' +
  'decimals: `…502`, its first claim is `502 claim_failed` and `…503` `503 escrow_vault_underfunded`, the letter ' +
  'claimable again and the next claim succeeding; `…504`, the claim is `502 claim_unsettled` (`details: {letterId, ' +
  'txHash}`), held for that claimant, and returned CLAIMED once the reconciliation (the sweep) lands.';
