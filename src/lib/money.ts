import { AppError } from './errors.ts';

/** Public stablecoin and cSTABLE share 6 decimals (1 public unit wraps into 1 confidential unit). */
export const STABLE_DECIMALS = 6;
export const GAS_DECIMALS = 18;
/** Confidential amounts are euint64 on-chain. */
export const MAX_CONFIDENTIAL_BASE_UNITS = 2n ** 64n - 1n;

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,30}))?$/;

/**
 * Parses a decimal string in human units into base units. Anything else (a number, a negative, an exponent,
 * more fraction digits than the token has, zero when `positive`) is `400 invalid_amount`.
 */
export function parseAmount(
  value: unknown,
  decimals: number = STABLE_DECIMALS,
  options: { positive?: boolean; max?: bigint } = {},
): bigint {
  const { positive = true, max = MAX_CONFIDENTIAL_BASE_UNITS } = options;
  if (typeof value !== 'string') {
    throw new AppError('invalid_amount', 'amount must be a decimal string, for example "12.50".');
  }
  const match = DECIMAL.exec(value);
  if (!match) throw new AppError('invalid_amount', 'amount must be a decimal string, for example "12.50".');
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    throw new AppError('invalid_amount', `amount has more than ${decimals} decimal places.`);
  }
  const baseUnits = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (positive && baseUnits <= 0n) throw new AppError('invalid_amount', 'amount must be greater than zero.');
  if (baseUnits > max) throw new AppError('invalid_amount', 'amount is larger than the maximum allowed.');
  return baseUnits;
}

/** Formats base units as a decimal string with at least two fraction digits: 12500000n → "12.50". */
export function formatAmount(baseUnits: bigint, decimals: number = STABLE_DECIMALS): string {
  const negative = baseUnits < 0n;
  const abs = negative ? -baseUnits : baseUnits;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  let fraction = (abs % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  if (fraction.length < 2) fraction = fraction.padEnd(Math.min(2, decimals), '0');
  const body = fraction ? `${whole}.${fraction}` : whole.toString();
  return negative ? `-${body}` : body;
}
