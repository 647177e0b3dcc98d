/**
 * What the run's global setup made (`test/global/fixtures.ts`), read in a test file's process, or null: outside
 * the suite's projects (a CI-only config, the benchmarks) nothing is provided, and the caller builds its own.
 */
import { inject } from 'vitest';

export function providedOrNull(key: 'databaseImage' | 'databaseTemplate' | 'chainTemplate'): string | null {
  try {
    return inject(key) ?? null;
  } catch {
    return null;
  }
}
