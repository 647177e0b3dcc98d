import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { formatAmount, parseAmount } from './money.ts';

describe('money', () => {
  it('parses decimal strings into base units exactly', () => {
    expect(parseAmount('12.5')).toBe(12_500_000n);
    expect(parseAmount('0.000001')).toBe(1n);
    expect(parseAmount('1000')).toBe(1_000_000_000n);
    expect(parseAmount('0.05', 18)).toBe(50_000_000_000_000_000n);
  });

  it.each([
    12.5,
    '-1',
    '0',
    '0.0',
    '1e3',
    '1.0000001',
    '',
    ' ',
    'abc',
    null,
    undefined,
    '18446744073709.551616',
    // Surrounding whitespace of any kind is not part of an amount.
    ' 5',
    '5 ',
    '\t5',
    '5\n',
    '\u00a05',
    '\ufeff5',
    '5\u00a0',
  ])('rejects %j with invalid_amount', (value) => {
    expect(() => parseAmount(value)).toThrow(AppError);
    try {
      parseAmount(value);
    } catch (error) {
      expect((error as AppError).code).toBe('invalid_amount');
      expect((error as AppError).status).toBe(400);
    }
  });

  it('formats base units with at least two fraction digits and no float', () => {
    expect(formatAmount(12_500_000n)).toBe('12.50');
    expect(formatAmount(1n)).toBe('0.000001');
    expect(formatAmount(0n)).toBe('0.00');
    expect(formatAmount(10n ** 18n, 18)).toBe('1.00');
    expect(formatAmount(2n ** 64n - 1n)).toBe('18446744073709.551615');
  });
});
