import type { Address, Chain, Hex, PublicClient } from 'viem';

/** The networks a service can run against: `local` is the embedded network, the others are remote. */
export type NetworkName = 'local' | 'devnet' | 'sepolia' | 'mainnet';

/** sealpay's three contracts on a network: the stablecoin, its confidential wrapper and the letter vault. */
export interface ContractAddresses {
  stablecoin: Address;
  confidentialToken: Address;
  letterVault: Address;
}

/** An amount encrypted for a contract and caller: the handle and the proof the contract checks. */
export interface EncryptedAmount {
  /** The external handle (bytes32) to pass as `externalEuint64`. */
  handle: Hex;
  inputProof: Hex;
}

/** A public decryption: the clear values and the proof an on-chain verifier checks. */
export interface PublicDecryption {
  cleartexts: bigint[];
  /** ABI-encoded cleartexts, as `finalizeUnwrap`-style verifiers take them. */
  abiEncodedCleartexts: Hex;
  decryptionProof: Hex;
}

/**
 * The confidential rail: the only way service code touches FHE. The embedded network implements it with the
 * fhEVM mock, real networks with the Zama relayer SDK; callers cannot tell which.
 */
export interface ConfidentialRail {
  readonly kind: 'mock' | 'fhe';
  /** Encrypts a 64-bit amount as an input for `contract`, to be submitted by `caller`. */
  encryptAmount(params: { contract: Address; caller: Address; amount: bigint }): Promise<EncryptedAmount>;
  /** Several amounts under one input proof (one proof is 20-30 s of CPU with real FHE): batch where you can. */
  encryptAmounts(params: {
    contract: Address;
    caller: Address;
    amounts: bigint[];
  }): Promise<{ handles: Hex[]; inputProof: Hex }>;
  /** Decrypts a euint64 handle as its holder (EIP-712 grant signed with `privateKey`). The zero handle is 0n. */
  userDecrypt(params: { handle: Hex; contract: Address; privateKey: Hex }): Promise<bigint>;
  /**
   * Decrypts several handles as one holder, in as few requests as the relayer's 2,048-bit limit allows (32
   * amounts each: `decryption-chunks.ts`); results in the order given.
   */
  userDecryptMany(params: {
    handles: { handle: Hex; contract: Address }[];
    privateKey: Hex;
  }): Promise<bigint[]>;
  /** Public decryption with the KMS proof, for handles marked publicly decryptable. */
  publicDecrypt(handles: Hex[]): Promise<PublicDecryption>;
}

/** The chain adapter services see: one network, its clients, contracts and confidential rail. */
export interface Network {
  readonly name: NetworkName;
  readonly chainId: number;
  readonly chain: Chain;
  /** viem client for reads, receipts, gas estimation and `sendRawTransaction`. */
  readonly publicClient: PublicClient;
  readonly contracts: ContractAddresses;
  /**
   * The TransferBatcher (contracts/TransferBatcher.sol): many confidential transfers under one input proof. Null
   * where none is deployed (a real network without `TRANSFER_BATCHER_ADDRESS`): every transfer then goes alone.
   */
  readonly transferBatcher: Address | null;
  /** Base of explorer links (`{base}/tx/{hash}`); null on the embedded network. */
  readonly explorerBaseUrl: string | null;
  /** The upstream RPC address on real networks; null on `local`, where the service itself serves `/rpc`. */
  readonly upstreamRpcUrl: string | null;
  /** The service's operator account: faucet, vault owner. Its key never leaves this object. */
  readonly operator: { address: Address; privateKey: Hex };
  readonly rail: ConfidentialRail;
  /** Raw EIP-1193 access, served as JSON-RPC at `POST /rpc` on the embedded network only. */
  readonly rpc: ((args: { method: string; params?: unknown }) => Promise<unknown>) | null;
  /** Readiness probe: the chain answers (and, on real networks, the relayer is configured). */
  ready(): Promise<{ ok: boolean; detail?: string }>;
  close(): Promise<void>;
}
