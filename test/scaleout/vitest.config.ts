import { defineConfig } from 'vitest/config';

/** The scale-out run (`.ci/run`, after the PostgreSQL suite): real processes, not part of `npm test`. */
export default defineConfig({
  test: {
    include: ['test/scaleout/*.kill9.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
