/**
 * The sandbox's magic amounts (issue 31), as test card numbers are for card payments: on the sandbox networks
 * (`local`, `devnet`) the last three of an amount's six decimals choose an outcome, produced by the real code path
 * (the worker's pre-flight, the inline driver, the claim). In production they are ordinary amounts. The amount
 * really moved is the amount given, trigger digits included.
 */

/** What an amount's last three decimals (base units modulo 1000) ask for. */
export const SANDBOX_TRIGGERS = {
  /** `/fund`, `/mint`, `/transfer`, `/redeem`: QUEUED → FAILED with the operation's own code; nothing moves. */
  402: 'fail',
  /** The same four: transient faults for 30 s (the row stays QUEUED), then it completes normally. */
  429: 'transient',
  /** A letter: its first claim answers `502 claim_failed`, the letter stays claimable; the next claim succeeds. */
  502: 'claim_failed',
  /** A letter: its first claim answers `503 escrow_vault_underfunded`; the next claim succeeds. */
  503: 'escrow_vault_underfunded',
  /** A letter: its claim answers `502 claim_unsettled` ({letterId, txHash}); it completes at reconciliation. */
  504: 'claim_unsettled',
  /** A letter's creation answers `502 escrow_unsettled` ({letterId, txHash}); it reads ESCROWED soon after. */
  505: 'escrow_unsettled',
} as const;

export type SandboxTrigger = (typeof SANDBOX_TRIGGERS)[keyof typeof SANDBOX_TRIGGERS];

/** The trigger of an amount in base units (6 decimals), or null for an ordinary amount. */
export function sandboxTriggerOf(baseUnits: bigint): SandboxTrigger | null {
  const digits = Number(baseUnits % 1000n);
  return (SANDBOX_TRIGGERS as Record<number, SandboxTrigger>)[digits] ?? null;
}
