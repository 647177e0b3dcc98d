import { defineConfig } from 'vitest/config';

/**
 * The Zama template compatibility run (`.ci/run`, its own step): `sealpay devnet` and a Hardhat dApp built with
 * `@fhevm/hardhat-plugin`, as real processes; a Solidity compile and two Hardhat test runs, so not in `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/compat/*.compat.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
