import { defineConfig } from 'vitest/config';

/** The browser suite (web/e2e/run.sh starts the service and runs this): one file at a time, one browser each. */
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
    pool: 'forks',
    reporters: ['verbose'],
  },
});
