/**
 * What the run's global setup made (`test/global/fixtures.ts`), read in a test file's process, or null: outside
 * the suite's projects (a CI-only config, the benchmarks) nothing is provided, and the caller builds its own.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

export function providedOrNull(key: 'databaseImage' | 'databaseTemplate' | 'chainTemplate'): string | null {
  try {
    return inject(key) ?? null;
  } catch {
    return null;
  }
}

/**
 * Copies `part` of the run's data directory template (`chain`, or `''` for the whole) into `dataDir`, leaving out
 * what belongs to the process that made it (the engine's IPC socket directory, the chain's and the database's
 * locks). Returns false, copying nothing, where the run made no template.
 */
export function copyFromTemplate(part: string, dataDir: string): boolean {
  const template = providedOrNull('chainTemplate');
  if (!template) return false;
  cpSync(join(template, part), join(dataDir, part), {
    recursive: true,
    filter: (source) => !/[/\\](anvil|lock|database\.lock)$/.test(source),
  });
  return true;
}
