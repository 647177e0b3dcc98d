import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.ts';

const policy = { firstMs: 5_000, factor: 3, maxMs: 6 * 60 * 60 * 1000 };

describe('backoffMs', () => {
  it('grows by its factor from the first wait, each drawn between half and all of it', () => {
    for (const [retry, base] of [
      [0, 5_000],
      [1, 15_000],
      [2, 45_000],
      [5, 1_215_000],
    ] as const) {
      for (let i = 0; i < 50; i++) {
        const wait = backoffMs(policy, retry);
        expect(wait).toBeGreaterThanOrEqual(base / 2);
        expect(wait).toBeLessThanOrEqual(base);
      }
    }
  });

  it('stops at its cap however many retries, and reads a negative retry as the first', () => {
    for (const retry of [20, 1_000, Number.MAX_SAFE_INTEGER]) {
      const wait = backoffMs(policy, retry);
      expect(wait).toBeGreaterThanOrEqual(policy.maxMs / 2);
      expect(wait).toBeLessThanOrEqual(policy.maxMs);
    }
    expect(backoffMs(policy, -3)).toBeLessThanOrEqual(5_000);
  });

  it('spreads the waits of rows that failed together (jitter)', () => {
    const waits = new Set(Array.from({ length: 20 }, () => backoffMs(policy, 3)));
    expect(waits.size).toBeGreaterThan(1);
  });
});
