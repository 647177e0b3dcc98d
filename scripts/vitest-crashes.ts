/**
 * Reads a `vitest run` output for the one failure `scripts/vitest.ts` runs again: a test file whose process died
 * under it (V8 crashing under PGlite, nodejs/node#64500) while no test failed.
 */
import { stripVTControlCharacters } from 'node:util';

const CRASH = /Worker exited unexpectedly with signal \w+ during \w+ state while running test file (\S+)/g;

/**
 * The files whose process crashed, when those crashes are everything that went wrong (no test failed, and every
 * unhandled error of the run is one of them); null otherwise, and when nothing crashed.
 */
export function onlyCrashes(output: string): string[] | null {
  const text = stripVTControlCharacters(output);
  const crashes = [...text.matchAll(CRASH)].map((match) => match[1] as string);
  if (crashes.length === 0) return null;
  const tests = text.match(/^\s*Tests\s+(.*)$/m)?.[1] ?? '';
  if (/\bfailed\b/.test(tests)) return null;
  const errors = Number(text.match(/^\s*Errors\s+(\d+) errors?\b/m)?.[1] ?? Number.NaN);
  return errors === crashes.length ? [...new Set(crashes)] : null;
}
