/**
 * A dApp as Zama's `fhevm-hardhat-template` builds one (Hardhat 2, `@fhevm/hardhat-plugin`, ethers), run against
 * `sealpay devnet` with `npx hardhat test --network localhost` (test/zama-dapp.test.ts of sealpay starts the
 * devnet and runs it). Two departures from the template, neither about the chain:
 * - the compiler is solc-js from npm (the `solc` package), never a compiler Hardhat would download;
 * - `localhost` may point elsewhere than 127.0.0.1 (`SEALPAY_DEVNET_URL`), so that test runs side by side each have a
 *   devnet of their own. The plugin insists on port 8545 for `localhost`: the test picks a free loopback address.
 * Hardhat's built-in `localhost` otherwise: its accounts are the node's (`eth_accounts`, signed by the node), as the
 * template uses them.
 */
import '@nomicfoundation/hardhat-ethers';
import '@fhevm/hardhat-plugin';
import { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } from 'hardhat/builtin-tasks/task-names';
import { type HardhatUserConfig, subtask } from 'hardhat/config';
import type { SolcBuild } from 'hardhat/types';

const SOLC_VERSION = '0.8.27';

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args: { solcVersion: string }): Promise<SolcBuild> => {
  const solc = require('solc') as { version(): string };
  const longVersion = solc.version().replace(/\.Emscripten\.clang$/, '');
  if (args.solcVersion !== SOLC_VERSION || !longVersion.startsWith(`${SOLC_VERSION}+`)) {
    throw new Error(`Only solc ${SOLC_VERSION} from npm is used here (found ${longVersion})`);
  }
  return {
    version: SOLC_VERSION,
    longVersion,
    compilerPath: require.resolve('solc/soljson.js'),
    isSolcJs: true,
  };
});

const config: HardhatUserConfig = {
  defaultNetwork: 'hardhat',
  networks: {
    localhost: { url: process.env.SEALPAY_DEVNET_URL ?? 'http://127.0.0.1:8545' },
  },
  solidity: {
    version: SOLC_VERSION,
    settings: {
      metadata: { bytecodeHash: 'none' },
      optimizer: { enabled: true, runs: 800 },
      evmVersion: 'cancun',
    },
  },
  mocha: { timeout: 120_000 },
};

export default config;
