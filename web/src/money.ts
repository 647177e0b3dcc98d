/**
 * Amounts are decimal strings in human units, never floats. The client only checks the shape; the service
 * decides what is allowed (decimals, caps, balances).
 */

const AMOUNT = /^(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,6})?$/;

/**
 * Trims and normalises typing habits into a decimal string, or null if it is not one: `12.` / `.5`, a decimal comma
 * (`1,5`, `12,50`), and the app's own display format with thousands separators (`1,000.50`, `12,345`).
 */
export function parseAmountInput(raw: string): string | null {
  let value = raw.trim().replace(/\s+/g, '');
  if (/^[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?$/.test(value)) value = value.replaceAll(',', '');
  else if (/^[0-9]*,[0-9]+$/.test(value)) value = value.replace(',', '.');
  if (value.startsWith('.')) value = `0${value}`;
  if (value.endsWith('.')) value = value.slice(0, -1);
  value = value.replace(/^0+(?=[0-9])/, '');
  if (!AMOUNT.test(value)) return null;
  if (/^0(?:\.0*)?$/.test(value)) return null;
  return value;
}

export const AMOUNT_HINT = 'A positive decimal amount such as 25, 12.50 or 1,000.50 (up to 6 decimals).';

/** Decimals the app computes with: every token's amounts fit (STABLE and cSTABLE have 6, gas 18). */
const SCALE = 18;

/** A decimal string (`1,000.50` too) as an integer of `SCALE` decimals: exact, never through a float. */
function scaled(amount: string): bigint {
  const [whole = '0', fraction = ''] = amount.replaceAll(',', '').split('.');
  return BigInt(whole + fraction.padEnd(SCALE, '0').slice(0, SCALE));
}

/** `a` − `b` as a sign (−1, 0, 1), for decimal strings of up to 18 decimals: exact, never through a float. */
export function compareAmounts(a: string, b: string): number {
  const difference = scaled(a) - scaled(b);
  return difference === 0n ? 0 : difference > 0n ? 1 : -1;
}

/**
 * `first` plus each of `more` (a term starting with `-` is taken away), exactly, as a decimal string with as many
 * decimals as the most precise term and at least two, the way the service writes amounts (`45.00` − `10.000429` is
 * `34.999571`). No terms at all: `0.00`.
 */
export function sumAmounts(...terms: string[]): string {
  const total = terms.reduce((sum, term) => sum + scaled(term), 0n);
  const decimals = Math.max(2, ...terms.map((term) => term.split('.')[1]?.length ?? 0));
  const digits = (total < 0n ? -total : total).toString().padStart(SCALE + 1, '0');
  const whole = digits.slice(0, -SCALE);
  const fraction = digits.slice(-SCALE).slice(0, decimals);
  return `${total < 0n ? '-' : ''}${whole}.${fraction}`;
}

/** `amount` taken away from `from` (see `sumAmounts`). */
export function subtractAmount(from: string, amount: string): string {
  return sumAmounts(from, amount.startsWith('-') ? amount.slice(1) : `-${amount}`);
}

/**
 * The one way the app shows an amount (issue 36: "5" and "5.00", "5000.00" and "5,000" were both seen): the integer
 * part grouped by thousands, and at least two decimals, more only where they are not zeros ("5" → "5.00",
 * "5000.00" → "5,000.00", "10.000402" stays). The digits are the service's (or the person's), never a float's.
 */
export function formatAmount(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(amount);
  if (!match) return amount;
  const [, sign = '', whole = '', fraction = ''] = match;
  const decimals = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${decimals}`;
}

/**
 * A message of the service's that names amounts (`details` such as `available` and `requested`: "The wallet holds
 * 5000.00 cSTABLE…"), with each of them in the app's format.
 */
export function formatAmountsIn(message: string, amounts: readonly unknown[]): string {
  let out = message;
  for (const amount of new Set(amounts)) {
    if (typeof amount !== 'string' || !/^[0-9]+(?:\.[0-9]+)?$/.test(amount)) continue;
    const escaped = amount.replace('.', '\\.');
    out = out.replace(new RegExp(`(?<![0-9.,])${escaped}(?![0-9])`, 'g'), formatAmount(amount));
  }
  return out;
}

/** Gas amounts have 18 decimals: shown cut (never rounded through a float) to `digits` decimals. */
export function formatGas(amount: string, digits = 6): string {
  const [whole = '0', fraction = ''] = amount.split('.');
  if (fraction.length <= digits) return formatAmount(amount);
  const cut = fraction.slice(0, digits).replace(/0+$/, '');
  const shown = formatAmount(cut ? `${whole}.${cut}` : whole);
  return fraction.length > digits && /[1-9]/.test(fraction.slice(digits)) ? `≈ ${shown}` : shown;
}
