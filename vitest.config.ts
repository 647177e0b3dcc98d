import { defineConfig } from 'vitest/config';
import TierSequencer from './test/sequencer.ts';
import { TIERS } from './test/tiers.ts';

const SHARED_MODULE_TIERS = ['unit', 'api', 'engine'];

/**
 * `npm test`: every tier (`test/tiers.ts`) as a vitest project, on PGlite. `npm run test:pg`: the database tiers on
 * PostgreSQL. One tier alone: `npx vitest run --project unit` (see README, "Tests").
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    // Three files at once on the 2-core machine: the chain and process files spend much of their time waiting (for
    // a block, a child's start, a poll), and two workers kept ~1.1 of 2 cores busy (`npm test`: 13.6 min of CPU in
    // 12 min). Three: 528 s instead of 689 s, the same 811 tests passing.
    maxWorkers: 3,
    // Once per run: the migrated database and the deployed chain the files copy (`test/global/fixtures.ts`), and the
    // recorder of every error answer, whose codes are checked against the OpenAPI document after a whole run.
    globalSetup: ['test/global/fixtures.ts', 'test/documented-errors/global-setup.ts'],
    setupFiles: ['test/documented-errors/per-file.ts'],
    // The longest files first, across tiers, so that both workers are busy to the end (`test/sequencer.ts`).
    sequence: { sequencer: TierSequencer },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts'],
      reporter: ['text-summary', 'json-summary'],
    },
    projects: Object.entries(TIERS).map(([name, include]) => ({
      extends: true,
      // Files of a tier share their worker's module cache (the app, viem, Drizzle imported once, not per file),
      // where no file mocks a module: the chain tier's wallet-export test mocks node:crypto, and the process tier's
      // files are about processes. The project's modules keep no state of their own (docs/CONVENTIONS.md).
      test: { name, include: [...include], isolate: !SHARED_MODULE_TIERS.includes(name) },
    })),
  },
});
