import { defineConfig } from 'vitest/config';

/**
 * The public-chain run (`.ci/run`, after the scale-out run): the worker on a devnet with 1 s blocks behind two
 * faulty providers, fee spikes, a forgetful mempool and reorgs. Real processes, not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/publicchain/*.chain.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
