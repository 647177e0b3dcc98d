import { describe, expect, it } from 'vitest';
import { iso } from './time.ts';

describe('iso', () => {
  it('writes what toISOString writes, across years 0 to 9999 and beyond them', () => {
    const dates = [
      new Date(0),
      new Date(-1),
      new Date('0000-01-01T00:00:00.000Z'),
      new Date('0999-03-04T05:06:07.008Z'),
      new Date('9999-12-31T23:59:59.999Z'),
      new Date('+010000-01-01T00:00:00.000Z'),
      new Date('-000001-12-31T23:59:59.999Z'),
    ];
    // A fixed spread over the range (no randomness: a failure repeats).
    for (let i = 0; i < 5_000; i += 1) dates.push(new Date((i * 50_680_460_159_999) % 253_402_300_800_000));
    for (const date of dates) expect(iso(date)).toBe(date.toISOString());
  });

  it('passes null on, and refuses an invalid date as toISOString does', () => {
    expect(iso(null)).toBeNull();
    expect(iso(undefined)).toBeNull();
    expect(() => iso(new Date(Number.NaN))).toThrow(RangeError);
  });
});
