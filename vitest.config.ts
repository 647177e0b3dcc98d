import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'clients/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // Records every error answer, and checks the OpenAPI document's codes against them after a whole run.
    globalSetup: ['test/documented-errors/global-setup.ts'],
    setupFiles: ['test/documented-errors/per-file.ts'],
  },
});
