/**
 * The sandbox's magic amounts (`local` and `devnet` only; ordinary amounts in production): the last three of an
 * amount's six decimals choose an outcome, so a client can make every failure path happen on demand. The amount
 * moved is the whole amount, trigger digits included.
 */
export const SANDBOX_OUTCOMES = {
  /** `/fund`, `/mint`, `/transfer`, `/redeem`: QUEUED → FAILED with the operation's own `errorCode`; nothing moves. */
  fail: '402',
  /** The same four: transient faults for ~30 s (the row stays QUEUED), then it completes. Tests polling. */
  transient: '429',
  /** A letter: its first claim is `502 claim_failed`, the letter stays claimable; the next claim succeeds. */
  claimFailed: '502',
  /** A letter: its first claim is `503 escrow_vault_underfunded`; the next claim succeeds. */
  vaultUnderfunded: '503',
  /** A letter: its claim is `502 claim_unsettled` (`{letterId, txHash}`); it completes for that claimant. */
  claimUnsettled: '504',
  /** A letter's creation is `502 escrow_unsettled` (`{letterId, txHash}`); the letter reads ESCROWED later. */
  escrowUnsettled: '505',
} as const;

export type SandboxOutcome = keyof typeof SANDBOX_OUTCOMES;

/**
 * The amount that makes `outcome` happen in the sandbox: `sandboxAmount('12.5', 'fail')` is `'12.500402'`.
 * `amount` is a decimal with at most three decimals (the other three are the trigger).
 */
export function sandboxAmount(amount: string | number, outcome: SandboxOutcome): string {
  const text = typeof amount === 'number' ? String(amount) : amount.trim();
  const match = /^(\d+)(?:\.(\d{0,3}))?$/.exec(text);
  if (!match) throw new RangeError(`sandboxAmount: ${text} is not a decimal with at most three decimals`);
  return `${match[1]}.${(match[2] ?? '').padEnd(3, '0')}${SANDBOX_OUTCOMES[outcome]}`;
}
