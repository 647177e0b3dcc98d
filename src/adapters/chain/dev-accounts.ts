/**
 * The development accounts of `sealpay devnet`: the ten accounts of the standard test mnemonic (`test test … junk`,
 * the accounts `hardhat node` and `anvil` fund), 10,000 ETH each, whose keys the devnet holds and uses as
 * `hardhat node` does: `eth_accounts` lists them, and `eth_sendTransaction`, `eth_sign`, `personal_sign` and
 * `eth_signTypedData_v4` from them are signed by the node. Hardhat's built-in `localhost` network uses exactly that
 * (its accounts are the node's), so Zama's `fhevm-hardhat-template` deploys and signs its decryption grants this way.
 *
 * Their keys are public: they are funded on the devnet only (at its first start), never on `npm start`'s `/rpc`,
 * which answers `eth_accounts` with none and refuses node-side signing, and never on a real network.
 */
import { HDNodeWallet } from 'ethers';
import { type Address, BaseError, getAddress, type Hex, isAddress, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { RpcError } from './evm.ts';
import { failureOfCallError, HARDHAT_TX_GAS_CAP } from './hardhat-reverts.ts';
import type { RpcFunction } from './jsonrpc.ts';
import { type ChainAccess, estimateGasLimit, type FeeEstimate, signTransaction } from './tx.ts';

/** Hardhat's and anvil's well-known test mnemonic: its accounts are public, for local networks only. */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
/** How many accounts of the test mnemonic the devnet funds and signs for (as `hardhat node`). */
export const DEV_ACCOUNT_COUNT = 10;
/** Ether each development account receives at genesis (as `hardhat node`). */
export const DEV_ACCOUNT_BALANCE = parseEther('10000');

/** One development account: its address and its (public, test-only) private key. */
export interface DevAccount {
  address: Address;
  privateKey: Hex;
}

/** The accounts `m/44'/60'/0'/0/0` to `…/9` of the test mnemonic (deriving them takes ~0.1 s: done when needed). */
export function deriveDevAccounts(): DevAccount[] {
  const root = HDNodeWallet.fromPhrase(TEST_MNEMONIC, '', "m/44'/60'/0'/0");
  return Array.from({ length: DEV_ACCOUNT_COUNT }, (_, index) => {
    const wallet = root.deriveChild(index);
    return { address: getAddress(wallet.address), privateKey: wallet.privateKey as Hex };
  });
}

/** The methods answered for the development accounts (others go on to the chain). */
const SIGNING_METHODS = new Set([
  'eth_accounts',
  'eth_requestAccounts',
  'eth_sendTransaction',
  'eth_sendTransactionSync',
  'eth_sign',
  'personal_sign',
  'eth_signTypedData_v4',
]);

interface TransactionRequest {
  from?: string;
  to?: string | null;
  data?: Hex;
  input?: Hex;
  value?: Hex;
  gas?: Hex;
  gasPrice?: Hex;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
  nonce?: Hex;
  chainId?: Hex;
  accessList?: unknown[];
}

interface TypedData {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

function invalidParams(message: string): RpcError {
  return new RpcError(-32602, `Invalid params: ${message}`);
}

function quantity(value: unknown, what: string): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
  throw invalidParams(`${what} must be a hex quantity`);
}

/** The fees the caller asked for, if any (a legacy `gasPrice` becomes both EIP-1559 caps). */
function feesOf(request: TransactionRequest): FeeEstimate | undefined {
  const gasPrice = quantity(request.gasPrice, 'gasPrice');
  if (gasPrice !== undefined) return { maxFeePerGas: gasPrice, maxPriorityFeePerGas: gasPrice };
  const maxFeePerGas = quantity(request.maxFeePerGas, 'maxFeePerGas');
  const maxPriorityFeePerGas = quantity(request.maxPriorityFeePerGas, 'maxPriorityFeePerGas');
  if (maxFeePerGas === undefined && maxPriorityFeePerGas === undefined) return undefined;
  if (maxFeePerGas === undefined || maxPriorityFeePerGas === undefined) {
    throw invalidParams('give both maxFeePerGas and maxPriorityFeePerGas, or gasPrice');
  }
  return { maxFeePerGas, maxPriorityFeePerGas };
}

/**
 * The gas limit of a node-signed send that names none: the chain's estimate with the service's margin or, when the
 * estimate says the call fails, the limit `hardhat node` gives every such send (the block's, capped), so that it is
 * mined as failed and answered as Hardhat answers it (`hardhat-reverts.ts`) instead of refused unsent.
 */
async function gasLimitOf(
  access: ChainAccess,
  from: Address,
  call: { to?: Address; data?: Hex; value?: bigint },
): Promise<bigint> {
  try {
    return await estimateGasLimit(access, from, call);
  } catch (error) {
    const answer = error instanceof BaseError ? error.walk((cause) => cause instanceof RpcError) : null;
    if (!failureOfCallError(answer)) throw error;
    const { gasLimit } = await access.publicClient.getBlock({ blockTag: 'latest' });
    return gasLimit < HARDHAT_TX_GAS_CAP ? gasLimit : HARDHAT_TX_GAS_CAP;
  }
}

function parseTypedData(value: unknown): TypedData {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (typeof parsed !== 'object' || parsed === null) throw invalidParams('typed data must be an object');
  const { domain, types, primaryType, message } = parsed as Partial<TypedData>;
  if (!domain || !types || typeof primaryType !== 'string' || !message) {
    throw invalidParams('typed data needs domain, types, primaryType and message');
  }
  return { domain, types, primaryType, message };
}

/**
 * Wraps the devnet's JSON-RPC function: the signing methods are answered for the development accounts, everything
 * else (and signing for any other address: an impersonated one, which the chain signs for, or an unknown one, which
 * it refuses) goes to `next`. Transactions are signed on the service's one signing path (`signTransaction`, its gas
 * margin included) and submitted as raw transactions through `next`, so the journal holds their bytes; one at a
 * time, so that two sends from one account never take the same nonce.
 */
export function withDevAccounts(next: RpcFunction, access: ChainAccess): RpcFunction {
  let accounts: Map<string, DevAccount> | null = null;
  const accountsByAddress = () => {
    accounts ??= new Map(deriveDevAccounts().map((account) => [account.address.toLowerCase(), account]));
    return accounts;
  };
  const devAccount = (address: unknown): DevAccount | undefined =>
    typeof address === 'string' && isAddress(address, { strict: false })
      ? accountsByAddress().get(address.toLowerCase())
      : undefined;
  let sending: Promise<unknown> = Promise.resolve();

  const send = async (method: string, account: DevAccount, request: TransactionRequest) => {
    const chainId = quantity(request.chainId, 'chainId');
    if (chainId !== undefined && chainId !== BigInt(access.chain.id)) {
      throw invalidParams(`chainId ${chainId} is not this chain's (${access.chain.id})`);
    }
    if (request.accessList && request.accessList.length > 0) {
      throw invalidParams('access lists are not supported in transactions the node signs');
    }
    const to = request.to ?? undefined;
    if (to !== undefined && !isAddress(to, { strict: false })) throw invalidParams('to must be an address');
    const nonce = quantity(request.nonce, 'nonce');
    const fees = feesOf(request);
    const call = {
      ...(to !== undefined ? { to: getAddress(to) } : {}),
      ...(request.data !== undefined || request.input !== undefined
        ? { data: (request.data ?? request.input) as Hex }
        : {}),
      ...(request.value !== undefined ? { value: quantity(request.value, 'value') ?? 0n } : {}),
    };
    const gas = quantity(request.gas, 'gas') ?? (await gasLimitOf(access, account.address, call));
    const signed = await signTransaction(access, {
      privateKey: account.privateKey,
      ...call,
      gas,
      ...(nonce !== undefined ? { nonce: Number(nonce) } : {}),
      ...(fees ? { fees } : {}),
    });
    const raw =
      method === 'eth_sendTransactionSync' ? 'eth_sendRawTransactionSync' : 'eth_sendRawTransaction';
    return next({ method: raw, params: [signed.serialized] });
  };

  return async (args) => {
    if (!SIGNING_METHODS.has(args.method)) return next(args);
    const params = Array.isArray(args.params) ? (args.params as unknown[]) : [];
    switch (args.method) {
      case 'eth_accounts':
      case 'eth_requestAccounts':
        // Lowercase, as `hardhat node` lists them.
        return [...accountsByAddress().keys()];
      case 'eth_sendTransaction':
      case 'eth_sendTransactionSync': {
        const request = params[0] as TransactionRequest | undefined;
        const account = devAccount(request?.from);
        if (!request || !account) return next(args);
        const result = sending.then(() => send(args.method, account, request));
        sending = result.catch(() => undefined);
        return result;
      }
      case 'eth_sign':
      case 'personal_sign': {
        // eth_sign is (address, data); personal_sign is (data, address).
        const [address, data] = args.method === 'eth_sign' ? params : [params[1], params[0]];
        const account = devAccount(address);
        if (!account) return next(args);
        if (typeof data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(data)) {
          throw invalidParams('the message must be hex bytes');
        }
        return privateKeyToAccount(account.privateKey).signMessage({ message: { raw: data as Hex } });
      }
      default: {
        const account = devAccount(params[0]);
        if (!account) return next(args);
        const { domain, types, primaryType, message } = parseTypedData(params[1]);
        // The domain's type is derived from the domain itself.
        const { EIP712Domain: _domain, ...messageTypes } = types;
        return privateKeyToAccount(account.privateKey).signTypedData({
          domain,
          types: messageTypes,
          primaryType,
          message,
        });
      }
    }
  };
}
