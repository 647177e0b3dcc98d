/** The service's clock, injectable so tests can move time (expiry, TOTP windows, rate-limit windows). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * ISO 8601 UTC with milliseconds, as every timestamp of the interface: what `toISOString` writes for years 0–9999,
 * put together from the UTC fields, which takes a third of `toISOString`'s time (each answer has several).
 */
export function iso(date: Date): string;
export function iso(date: Date | null | undefined): string | null;
export function iso(date: Date | null | undefined): string | null {
  if (!date) return null;
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString(); // signed six-digit years, and its RangeError
  return `${String(year).padStart(4, '0')}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(
    date.getUTCHours(),
  )}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}.${String(date.getUTCMilliseconds()).padStart(3, '0')}Z`;
}

function twoDigits(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
