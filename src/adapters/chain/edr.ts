/**
 * The in-process EVM of data directories made before anvil: `@nomicfoundation/edr` (the Rust EVM inside Hardhat
 * 2.28), driven over EIP-1193. New data directories run anvil (`anvil.ts`): EDR cannot save its state, so these
 * replay their whole journal at every start.
 *
 * Automining is off on purpose: the embedded network mines every block itself with `evm_mine(timestamp)`, so that
 * each block's timestamp is chosen (and journaled) by us and a replay reproduces identical blocks and hashes.
 */
import {
  ContractDecoder,
  EdrContext,
  L1_CHAIN_TYPE,
  l1GenesisState,
  l1HardforkFromString,
  l1ProviderFactory,
  MineOrdering,
  type Provider,
  type ProviderConfig,
} from '@nomicfoundation/edr';
import type { Address } from 'viem';
import {
  type Eip1193,
  EMBEDDED_BLOCK_GAS_LIMIT,
  EMBEDDED_CHAIN_ID,
  EMBEDDED_HARDFORK,
  INITIAL_BASE_FEE,
  RpcError,
} from './evm.ts';

let contextPromise: Promise<EdrContext> | undefined;

/** EDR wants one context per process ("should only be called once"). */
function edrContext(): Promise<EdrContext> {
  contextPromise ??= (async () => {
    const context = new EdrContext();
    await context.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return context;
  })();
  return contextPromise;
}

/** How to start EDR for a data directory made before anvil: its genesis time and funded accounts. */
export interface EdrOptions {
  /** Genesis timestamp (seconds); fixed per data directory so the genesis block is always the same. */
  genesisTimestamp: bigint;
  /** Accounts funded at genesis. */
  fundedAccounts: { address: Address; balance: bigint }[];
}

function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.replace(/^0x/, ''), 'hex'));
}

/**
 * EDR answers a revert in `eth_call`/`eth_estimateGas` as `{code: -32000, data: {data: '0x…'}}`; wallets, viem and
 * ethers expect geth's shape `{code: 3, message: 'execution reverted…', data: '0x…'}` to decode custom errors.
 */
function normalizeError(error: { code: number; message: string; data?: unknown }): RpcError {
  const inner = error.data as { data?: unknown } | undefined;
  const revertData = typeof inner === 'object' && inner !== null ? inner.data : undefined;
  if (typeof revertData === 'string' && /^0x[0-9a-fA-F]*$/.test(revertData)) {
    const detail = error.message.replace(/^VM Exception while processing transaction: /, '');
    return new RpcError(3, `execution reverted: ${detail}`, revertData);
  }
  return new RpcError(error.code, error.message, error.data);
}

/** Creates an EDR provider (chain 31337, no automine) and returns it as a plain EIP-1193 object. */
export async function createEdrProvider(options: EdrOptions): Promise<Eip1193> {
  const context = await edrContext();
  const genesisState = [
    ...l1GenesisState(l1HardforkFromString(EMBEDDED_HARDFORK)),
    ...options.fundedAccounts.map((a) => ({ address: hexToBytes(a.address), balance: a.balance })),
  ];
  const config: ProviderConfig = {
    allowBlocksWithSameTimestamp: false,
    allowUnlimitedContractSize: false,
    bailOnCallFailure: true,
    bailOnTransactionFailure: false,
    blockGasLimit: EMBEDDED_BLOCK_GAS_LIMIT,
    chainId: BigInt(EMBEDDED_CHAIN_ID),
    coinbase: new Uint8Array(20),
    genesisState,
    hardfork: EMBEDDED_HARDFORK,
    initialBaseFeePerGas: INITIAL_BASE_FEE,
    initialDate: options.genesisTimestamp,
    minGasPrice: 0n,
    mining: { autoMine: false, memPool: { order: MineOrdering.Fifo } },
    networkId: BigInt(EMBEDDED_CHAIN_ID),
    observability: {},
    ownedAccounts: [],
    precompileOverrides: [],
  };
  const provider: Provider = await context.createProvider(
    L1_CHAIN_TYPE,
    config,
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    { subscriptionCallback: () => {} },
    new ContractDecoder(),
  );
  let nextId = 1;
  return {
    async request({ method, params }) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: params ?? [] });
      const response = await provider.handleRequest(body);
      const data = (typeof response.data === 'string' ? JSON.parse(response.data) : response.data) as {
        result?: unknown;
        error?: { code: number; message: string; data?: unknown };
      };
      if (data.error) throw normalizeError(data.error);
      return data.result;
    },
  };
}
