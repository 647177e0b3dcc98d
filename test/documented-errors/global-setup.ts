/**
 * vitest's globalSetup: gives the run a directory for the error answers of every process
 * (`src/http/error-record.ts`) and, when the whole suite ran and passed, fails the run on a code the OpenAPI
 * document promises that no test produced (`gaps.ts`). A partial run
 * (some files, or a failure, or a crash that `scripts/vitest.ts` runs again alone) checks nothing: the answers of
 * the files that did not run are missing, and a failure is reported already.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildOpenApiDocument } from '../../scripts/openapi.ts';
import { TIERS } from '../tiers.ts';
import { readRecorded, unproducedCodes } from './gaps.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    errorRecordDir: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'sealpay-error-answers-'));
  project.provide('errorRecordDir', dir);
  return async () => {
    try {
      const state = project.vitest.state;
      const ran = new Set(state.getFilepaths());
      // The whole suite: every tier selected (`--project` narrows the run) and every file of each run.
      const selected = project.vitest.projects;
      const testFiles = (
        await Promise.all(selected.map(async (tier) => (await tier.globTestFiles()).testFiles))
      ).flat();
      const everyTier = Object.keys(TIERS).every((tier) => selected.some((each) => each.name === tier));
      const whole = everyTier && testFiles.length > 0 && testFiles.every((file) => ran.has(file));
      const passed =
        state.getCountOfFailedTests() === 0 &&
        state.getFailedFilepaths().length === 0 &&
        state.getUnhandledErrors().length === 0;
      if (!whole || !passed) return;
      const document = (await buildOpenApiDocument()) as Parameters<typeof unproducedCodes>[0];
      const unproduced = unproducedCodes(document, readRecorded(dir));
      if (unproduced.length > 0) {
        throw new Error(
          `${unproduced.length} error codes the OpenAPI document promises that no test produced (answer each in a ` +
            `test, or take it out of the route's config.errors):\n${unproduced.map((entry) => `  ${entry}`).join('\n')}`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
