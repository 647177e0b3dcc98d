/**
 * The confidential rail over an `FhevmInstance` (the relayer SDK's client interface). The embedded network passes
 * `MockFhevmInstance` (kind `mock`), real networks the relayer SDK's instance (kind `fhe`): the code is the same.
 *
 * - `encryptAmount` / `encryptAmounts`: one input proof for (contract, caller); several amounts can share one proof
 *   (expensive with real FHE: 20-30 s of CPU per proof).
 * - `userDecrypt` / `userDecryptMany`: EIP-712 grant signed with the holder's key. The decryption keypair and the
 *   signed grant are cached per (holder, contracts) for a day, so repeated balance reads cost one relayer call.
 *   Many handles go in requests of at most 2,048 encrypted bits each (`decryption-chunks.ts`).
 * - `publicDecrypt`: cleartexts with the KMS proof (`finalizeUnwrap`-style verifiers take `abiEncodedCleartexts`).
 */
import { type Address, getAddress, type Hex, numberToHex, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ConfidentialRail, EncryptedAmount, PublicDecryption } from '../chain/types.ts';
import { decryptionChunks } from './decryption-chunks.ts';

/** The part of the relayer SDK's `FhevmInstance` the rail uses (`MockFhevmInstance` has the same shape). */
export interface FhevmInstanceLike {
  createEncryptedInput(
    contractAddress: string,
    userAddress: string,
  ): {
    add64(value: number | bigint): unknown;
    encrypt(): Promise<{ handles: Uint8Array[]; inputProof: Uint8Array }>;
  };
  generateKeypair(): { publicKey: string; privateKey: string };
  createEIP712(
    publicKey: string,
    contractAddresses: string[],
    startTimestamp: number,
    durationDays: number,
  ): {
    domain: unknown;
    types: Record<string, readonly { name: string; type: string }[]>;
    primaryType: string;
    message: Record<string, unknown>;
  };
  userDecrypt(
    handles: { handle: string; contractAddress: string }[],
    privateKey: string,
    publicKey: string,
    signature: string,
    contractAddresses: string[],
    userAddress: string,
    startTimestamp: number,
    durationDays: number,
  ): Promise<Readonly<Record<string, bigint | boolean | string>>>;
  publicDecrypt(handles: string[]): Promise<{
    clearValues: Readonly<Record<string, bigint | boolean | string>>;
    abiEncodedClearValues: string;
    decryptionProof: string;
  }>;
}

const ZERO_HANDLE = `0x${'00'.repeat(32)}`;
const GRANT_DAYS = 1;
const GRANT_REFRESH_MS = 60 * 60 * 1000; // renew an hour before the grant expires
const GRANT_CACHE_MAX = 1000;

interface Grant {
  publicKey: string;
  privateKey: string;
  signature: string;
  startTimestamp: number;
  expiresAtMs: number;
}

function isZeroHandle(handle: string): boolean {
  return /^0x0*$/.test(handle);
}

function normalizeHandle(handle: string): Hex {
  return numberToHex(BigInt(handle), { size: 32 });
}

function lookup(results: Readonly<Record<string, bigint | boolean | string>>, handle: string): bigint {
  const wanted = normalizeHandle(handle);
  for (const [key, value] of Object.entries(results)) {
    if (normalizeHandle(key) === wanted) {
      if (typeof value === 'bigint') return value;
      if (typeof value === 'boolean') return value ? 1n : 0n;
      return BigInt(value);
    }
  }
  throw new Error(`Decryption returned no value for handle ${handle}`);
}

/** The confidential rail over an `FhevmInstance` (the mock's or the relayer SDK's), as its factory names it. */
export type FhevmRail = ConfidentialRail;

/**
 * Builds a rail over an instance obtained lazily (`getInstance` is called on first use and may throw an AppError,
 * e.g. `fhe_credentials_missing`).
 */
export function createFhevmRail(
  kind: 'mock' | 'fhe',
  getInstance: () => Promise<FhevmInstanceLike>,
): FhevmRail {
  const grants = new Map<string, Grant>();

  async function grantFor(
    instance: FhevmInstanceLike,
    privateKey: Hex,
    contracts: Address[],
  ): Promise<Grant> {
    const account = privateKeyToAccount(privateKey);
    const key = `${account.address}|${contracts.join(',')}`;
    const cached = grants.get(key);
    if (cached && cached.expiresAtMs - GRANT_REFRESH_MS > Date.now()) return cached;
    const keypair = instance.generateKeypair();
    // A little in the past so that a relayer clock slightly behind ours still accepts it.
    const startTimestamp = Math.floor(Date.now() / 1000) - 60;
    const eip712 = instance.createEIP712(keypair.publicKey, contracts, startTimestamp, GRANT_DAYS);
    const { EIP712Domain: _domain, ...types } = eip712.types;
    const signature = await account.signTypedData({
      domain: eip712.domain as Parameters<typeof account.signTypedData>[0]['domain'],
      types: types as Record<string, { name: string; type: string }[]>,
      primaryType: eip712.primaryType,
      message: eip712.message,
    });
    const grant: Grant = {
      publicKey: keypair.publicKey,
      privateKey: keypair.privateKey,
      signature: signature.replace(/^0x/, ''),
      startTimestamp,
      expiresAtMs: (startTimestamp + GRANT_DAYS * 86400) * 1000,
    };
    if (grants.size >= GRANT_CACHE_MAX) grants.delete(grants.keys().next().value as string);
    grants.set(key, grant);
    return grant;
  }

  async function encryptAmounts(params: {
    contract: Address;
    caller: Address;
    amounts: bigint[];
  }): Promise<{ handles: Hex[]; inputProof: Hex }> {
    if (params.amounts.length === 0) throw new Error('encryptAmounts: no amounts');
    for (const amount of params.amounts) {
      if (amount < 0n || amount > 0xffffffffffffffffn)
        throw new RangeError(`Amount ${amount} does not fit a uint64`);
    }
    const instance = await getInstance();
    const input = instance.createEncryptedInput(getAddress(params.contract), getAddress(params.caller));
    for (const amount of params.amounts) input.add64(amount);
    const { handles, inputProof } = await input.encrypt();
    return { handles: handles.map((h) => toHex(h, { size: 32 })), inputProof: toHex(inputProof) };
  }

  async function userDecryptMany(params: {
    handles: { handle: Hex; contract: Address }[];
    privateKey: Hex;
  }): Promise<bigint[]> {
    const pending = params.handles.filter((h) => !isZeroHandle(h.handle));
    const values = new Map<string, bigint>();
    if (pending.length > 0) {
      const instance = await getInstance();
      const contracts = [...new Set(pending.map((h) => getAddress(h.contract)))].sort();
      const grant = await grantFor(instance, params.privateKey, contracts);
      const user = privateKeyToAccount(params.privateKey).address;
      // One request carries at most 2,048 encrypted bits (32 amounts): more handles take several requests.
      for (const chunk of decryptionChunks(pending, (h) => normalizeHandle(h.handle))) {
        const results = await instance.userDecrypt(
          chunk.map((h) => ({ handle: normalizeHandle(h.handle), contractAddress: getAddress(h.contract) })),
          grant.privateKey,
          grant.publicKey,
          grant.signature,
          contracts,
          user,
          grant.startTimestamp,
          GRANT_DAYS,
        );
        for (const h of chunk) values.set(normalizeHandle(h.handle), lookup(results, h.handle));
      }
    }
    return params.handles.map((h) =>
      isZeroHandle(h.handle) ? 0n : (values.get(normalizeHandle(h.handle)) ?? 0n),
    );
  }

  return {
    kind,
    async encryptAmount(params): Promise<EncryptedAmount> {
      const { handles, inputProof } = await encryptAmounts({ ...params, amounts: [params.amount] });
      const handle = handles[0];
      if (!handle) throw new Error('encryption returned no handle');
      return { handle, inputProof };
    },
    encryptAmounts,
    async userDecrypt(params): Promise<bigint> {
      const [value] = await userDecryptMany({
        handles: [{ handle: params.handle, contract: params.contract }],
        privateKey: params.privateKey,
      });
      return value ?? 0n;
    },
    userDecryptMany,
    async publicDecrypt(handles: Hex[]): Promise<PublicDecryption> {
      const instance = await getInstance();
      const normalized = handles.map(normalizeHandle);
      const result = await instance.publicDecrypt(normalized);
      return {
        cleartexts: normalized.map((h) => lookup(result.clearValues, h)),
        abiEncodedCleartexts: result.abiEncodedClearValues as Hex,
        decryptionProof: result.decryptionProof as Hex,
      };
    },
  };
}

export { ZERO_HANDLE };
