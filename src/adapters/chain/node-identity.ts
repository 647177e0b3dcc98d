/**
 * How the embedded network names itself over JSON-RPC (`sealpay devnet`, the `/rpc` of `npm start`): as a Hardhat
 * node, which is what the tools written for `hardhat node` with Zama's plugin look for.
 *
 * - `web3_clientVersion` starts with `HardhatNetwork/`: Zama's React template takes a chain-31337 node for a mock
 *   fhEVM node only if its client version contains "hardhat" (then it asks `fhevm_relayer_metadata`), and
 *   `@nomicfoundation/hardhat-network-helpers` accepts a development node whose version starts with
 *   "hardhatnetwork" (or "anvil").
 * - `hardhat_metadata` answers Hardhat's shape (`chainId` 31337 and a 32-byte `instanceId`): `@fhevm/mock-utils`
 *   identifies a Hardhat node by it.
 * - `anvil_nodeInfo` is "method not found" (-32601), as on `hardhat node`: `@fhevm/mock-utils` asks it first and, if
 *   it names a chain, takes the node for anvil, which `@fhevm/hardhat-plugin` refuses on `--network localhost`
 *   ("Provider type mismatch. Expecting Hardhat Node, got Anvil").
 * The EVM underneath is anvil (the version string says so after the family name).
 */
import { ANVIL_VERSION } from './anvil.ts';
import { type Eip1193, EMBEDDED_CHAIN_ID, RpcError } from './evm.ts';

/** The devnet's `web3_clientVersion`: a Hardhat node's form, so Zama's Hardhat plugin treats it as one. */
export const CLIENT_VERSION = `HardhatNetwork/sealpay-devnet/anvil/${ANVIL_VERSION}`;

/** The methods answered here rather than by the EVM. */
export const NODE_IDENTITY_METHODS: ReadonlySet<string> = new Set([
  'web3_clientVersion',
  'hardhat_metadata',
  'anvil_nodeInfo',
]);

interface EngineMetadata {
  instanceId: string;
  latestBlockNumber: number;
  latestBlockHash: string;
}

/** Answers one of `NODE_IDENTITY_METHODS`; `engine` is the EVM (its metadata gives the instance and the head). */
export async function answerNodeIdentity(method: string, engine: Eip1193): Promise<unknown> {
  switch (method) {
    case 'web3_clientVersion':
      return CLIENT_VERSION;
    case 'hardhat_metadata': {
      const metadata = (await engine.request({ method: 'hardhat_metadata' })) as EngineMetadata;
      return {
        clientVersion: CLIENT_VERSION,
        chainId: EMBEDDED_CHAIN_ID,
        instanceId: metadata.instanceId,
        latestBlockNumber: metadata.latestBlockNumber,
        latestBlockHash: metadata.latestBlockHash,
      };
    }
    default:
      throw new RpcError(-32601, `Method ${method} not found (this node answers as a Hardhat node)`);
  }
}
