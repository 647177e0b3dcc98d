/**
 * The fhEVM mock stack on the embedded chain, as `@fhevm/hardhat-plugin` sets it up on Hardhat:
 *
 * - the host contracts are placed and initialized by `fhevm-host.ts`;
 * - `MockCoprocessor` (of `@fhevm/mock-utils`) computes clear results from the executor's events;
 * - a small in-process "relayer" answers the mock's relayer requests (input proofs, user and public decryption);
 * - `MockFhevmInstance` is the client, with the same interface as the relayer SDK's `FhevmInstance`.
 *
 * The handle database lives in memory and is saved in the embedded network's snapshots (`fhevm-db.ts`). Values of
 * encrypted inputs cannot be recomputed from the chain, so each input proof is also journaled (`{k: 'input'}`) and
 * re-registered when the journal after a snapshot is replayed; computed values are rebuilt from the chain's events
 * after the snapshot's block.
 */
import {
  FhevmHandle,
  MockCoprocessor,
  MockFhevmInstance,
  constants as mockConstants,
  contracts as mockContracts,
  version as mockUtilsVersion,
  relayer,
} from '@fhevm/mock-utils';
import {
  BrowserProvider,
  type EventFragment,
  Interface,
  type InterfaceAbi,
  LogDescription,
  Wallet,
} from 'ethers';
import { getAddress } from 'viem';
import type { Eip1193 } from '../chain/evm.ts';
import { type CoprocessorState, SnapshotFhevmDB } from './fhevm-db.ts';
import { type HostAddresses, hostArtifact, type MockSignerKeys, resolveHostAddresses } from './fhevm-host.ts';
import { coalescingQuery, serialQueue } from './serial-queries.ts';

const ZERO_HASH = `0x${'00'.repeat(32)}`;

/**
 * The executor's interface, for the mock coprocessor's reading of events. ethers' `Interface.parseLog` finds a log's
 * event by hashing the signature of every event of the ABI again for every log (keccak in JavaScript, ~20 per log):
 * under load that was ~7 % of the service's main thread. This one hashes each signature once.
 */
class TopicIndexedInterface extends Interface {
  readonly #byTopic = new Map<string, EventFragment>();

  constructor(abi: InterfaceAbi) {
    super(abi);
    this.forEachEvent((fragment) => this.#byTopic.set(fragment.topicHash, fragment));
  }

  override parseLog(log: { topics: readonly string[]; data: string }): LogDescription | null {
    const fragment = this.#byTopic.get(log.topics[0]?.toLowerCase() ?? '');
    if (!fragment || fragment.anonymous) return null;
    return new LogDescription(
      fragment,
      fragment.topicHash,
      this.decodeEventLog(fragment, log.data, log.topics),
    );
  }
}

/** The mock relayer and coprocessor of a local network, over the chain's fhEVM host contracts. */
export interface MockFhevm {
  instance: MockFhevmInstance;
  addresses: HostAddresses;
  /** Registers clear values of input handles (used by replay). */
  insertInputs(handles: string[], values: string[]): Promise<void>;
  /** Number of handles the mock knows (after processing pending chain events). */
  countHandles(): Promise<number>;
  /** Reads the executor events mined since the last query (so that `saveDatabase` has few left to read). */
  catchUp(): Promise<void>;
  /**
   * The handle database after every executor event up to the chain's head, for a snapshot. The caller holds the
   * chain still (no block may be mined meanwhile).
   */
  saveDatabase(): Promise<CoprocessorState>;
  /** Answers one of `RELAYER_METHODS` for an untrusted caller (every check of the real gateway first). */
  serveRelayer(method: string, params: unknown): Promise<unknown>;
  /**
   * The chain went back to block `blockNumber` (evm_revert, anvil_rollback, anvil_reorg): the handles of the blocks
   * after it are forgotten and their events read again from the chain as it now is.
   */
  rewind(blockNumber: number): Promise<void>;
}

/**
 * Creates the coprocessor, the in-process relayer and the `MockFhevmInstance` over an already set-up chain.
 * `recordInput` is called with every new input proof's handles and clear values before the proof is returned.
 * `database` is the handle database a snapshot saved (the coprocessor then reads the chain from its block on).
 */
export async function createMockFhevm(
  chain: Eip1193,
  params: {
    signers: MockSignerKeys;
    recordInput: (handles: string[], values: string[]) => Promise<void>;
    database?: CoprocessorState;
  },
): Promise<MockFhevm> {
  const addresses = await resolveHostAddresses(chain);
  // The mock reads the chain through ethers: no cache of the block number (a stale one makes decryptions miss).
  const readonlyProvider = new BrowserProvider(chain, 31337, {
    cacheTimeout: -1,
    staticNetwork: true,
    polling: false,
  });
  const kmsSigner = new Wallet(params.signers.kmsSignerKey, readonlyProvider);
  const coprocessorSigner = new Wallet(params.signers.coprocessorSignerKey, readonlyProvider);

  const repository = await mockContracts.FhevmContractsRepository.create(readonlyProvider, {
    aclContractAddress: addresses.acl,
    kmsContractAddress: addresses.kmsVerifier,
    aclAbi: hostArtifact('ACL').abi as never,
    fhevmExecutorAbi: hostArtifact('FHEVMExecutor').abi as never,
    hcuLimitAbi: hostArtifact('HCULimit').abi as never,
    inputVerifierAbi: hostArtifact('InputVerifier').abi as never,
    kmsVerifierAbi: hostArtifact('KMSVerifier').abi as never,
    inputVerifierProperties: { signers: [coprocessorSigner] },
    kmsVerifierProperties: { signers: [kmsSigner] },
  });

  const db = new SnapshotFhevmDB(params.database);
  // It reads the executor's events from `db.fromBlockNumber` on (its position is its own): made again at a rewind.
  const createCoprocessor = () =>
    MockCoprocessor.create(readonlyProvider, {
      coprocessorContractAddress: addresses.executor,
      coprocessorContractInterface: new TopicIndexedInterface(
        hostArtifact('FHEVMExecutor').abi as InterfaceAbi,
      ),
      coprocessorSigners: [coprocessorSigner],
      inputVerifierContractAddress: addresses.inputVerifier,
      db,
    });
  let coprocessor = await createCoprocessor();

  const insertInputs = async (handles: string[], values: string[]) => {
    for (const [i, handle] of handles.entries()) {
      const value = values[i];
      if (value === undefined) throw new Error('input handle without a value');
      // Input handles carry no chain position (as in the mock's own input flow).
      await coprocessor.insertHandleBytes32(handle, value, {
        blockNumber: 0,
        index: 0,
        transactionHash: ZERO_HASH,
      });
    }
  };

  const decryptOneAtATime = serialQueue();
  const queryHandles = coalescingQuery(decryptOneAtATime, (handles) =>
    coprocessor.queryHandlesBytes32AsHex(handles),
  );
  const kmsVerifier = repository.kmsVerifier;
  const inputVerifier = repository.inputVerifier;
  const metadata: relayer.RelayerMetadata & {
    verifyingContractAddressDecryption: string;
    verifyingContractAddressInputVerification: string;
  } = {
    version: mockUtilsVersion,
    chainId: MOCK_CHAIN_ID,
    gatewayChainId: Number(kmsVerifier.gatewayChainId),
    ACLAddress: addresses.acl,
    CoprocessorAddress: addresses.executor,
    KMSVerifierAddress: addresses.kmsVerifier,
    InputVerifierAddress: addresses.inputVerifier,
    // No relayer key exists here: the KMS signer (public on-chain) stands in, as a well-formed address.
    relayerSignerAddress: getAddress(kmsSigner.address),
    verifyingContractAddressDecryption: kmsVerifier.gatewayDecryptionAddress,
    verifyingContractAddressInputVerification: inputVerifier.gatewayInputVerificationAddress,
  };

  const inputProof = async (payload: unknown) => {
    relayer.assertIsMockRelayerV1InputProofPayload(payload);
    if (getAddress(payload.mockData.aclContractAddress) !== addresses.acl) {
      throw new RelayerRequestError(`ACL address mismatch: ${payload.mockData.aclContractAddress}`);
    }
    const contractChainId = Number(BigInt(payload.contractChainId));
    if (contractChainId !== MOCK_CHAIN_ID) {
      throw new RelayerRequestError(
        `contractChainId ${contractChainId} is not this chain (${MOCK_CHAIN_ID})`,
      );
    }
    const handleBytes = FhevmHandle.computeHandles(
      Buffer.from(payload.ciphertextWithInputVerification.replace(/^0x/, ''), 'hex'),
      payload.mockData.fhevmTypes,
      payload.mockData.aclContractAddress,
      contractChainId,
      mockConstants.FHEVM_HANDLE_VERSION,
    );
    const response = await coprocessor.computeCoprocessorSignatures(
      handleBytes,
      contractChainId,
      payload.contractAddress,
      payload.userAddress,
      payload.extraData,
    );
    const handles = response.handles.map((h) => (h.startsWith('0x') ? h : `0x${h}`));
    const values = payload.mockData.clearTextValuesBigIntHex;
    await insertInputs(handles, values);
    await params.recordInput(handles, values);
    return response;
  };

  const userDecryptResponse = async (pairs: { handle: string }[]) => {
    const handles = pairs.map((p) => `0x${BigInt(p.handle).toString(16).padStart(64, '0')}`);
    const decrypted = await queryHandles(handles);
    return { payload: { decrypted_values: decrypted }, signature: ZERO_HASH };
  };

  const publicDecrypt = async (payload: unknown) => {
    relayer.assertIsRelayerV1PublicDecryptPayload(payload);
    const clearTexts = await queryHandles(payload.ciphertextHandles);
    const signed = await kmsVerifier.computeDecryptionSignatures(
      payload.ciphertextHandles,
      clearTexts,
      payload.extraData,
    );
    return { decrypted_value: signed.abiEncodedClearResult, signatures: signed.signatures };
  };

  // In-process: MockFhevmInstance has already checked the ACL, the grant's signature and its validity.
  const relayerProvider: Eip1193 = {
    async request({ method, params: rawParams }) {
      const args = (rawParams ?? []) as unknown[];
      switch (method) {
        case relayer.RELAYER_V1_INPUT_PROOF:
          return inputProof(args[0]);
        case relayer.RELAYER_V1_USER_DECRYPT:
        case relayer.RELAYER_V1_DELEGATED_USER_DECRYPT:
          return userDecryptResponse(
            (args[0] as { handleContractPairs: { handle: string }[] }).handleContractPairs,
          );
        case relayer.RELAYER_V1_PUBLIC_DECRYPT:
          return publicDecrypt(args[0]);
        default:
          return chain.request({ method, params: rawParams });
      }
    },
  };

  /**
   * Over the network a caller is anyone: every check the real gateway and KMS make (ACL, the EIP-712 grant's
   * signer, its validity window, the contracts it names) is made here before a cleartext leaves, as
   * `@fhevm/hardhat-plugin` does on `hardhat node`.
   */
  /** The grant's window and chain, the contracts it names, and the ACL: `holder` and the contract may read. */
  const checkAccess = async (
    payload: {
      contractsChainId: string;
      requestValidity: { startTimestamp: string; durationDays: string };
      handleContractPairs: { handle: string; contractAddress: string }[];
      contractAddresses: string[];
    },
    holder: string,
  ) => {
    checkGrant(payload);
    MockFhevmInstance.verifyHandleContractAddresses(payload.handleContractPairs, payload.contractAddresses);
    await MockFhevmInstance.verifyUserACLPermissions(
      readonlyProvider,
      addresses.acl,
      payload.handleContractPairs,
      holder,
    );
  };

  const serveRelayer = async (method: string, rawParams: unknown): Promise<unknown> => {
    const args = Array.isArray(rawParams) ? rawParams : [];
    switch (method) {
      case relayer.RELAYER_METADATA:
        return metadata;
      case relayer.RELAYER_V1_INPUT_PROOF:
        return inputProof(args[0]);
      case relayer.RELAYER_V1_PUBLIC_DECRYPT: {
        const payload = args[0];
        relayer.assertIsRelayerV1PublicDecryptPayload(payload);
        await MockFhevmInstance.verifyPublicACLPermissions(
          readonlyProvider,
          addresses.acl,
          payload.ciphertextHandles,
        );
        return publicDecrypt(payload);
      }
      case relayer.RELAYER_V1_USER_DECRYPT: {
        const payload = args[0];
        relayer.assertIsRelayerV1UserDecryptPayload(payload);
        await checkAccess(payload, payload.userAddress);
        await MockFhevmInstance.verifyUserDecryptSignature(
          payload.publicKey,
          payload.signature,
          payload.contractAddresses,
          payload.userAddress,
          Number(payload.requestValidity.startTimestamp),
          Number(payload.requestValidity.durationDays),
          kmsVerifier.gatewayDecryptionAddress,
          MOCK_CHAIN_ID,
        );
        return userDecryptResponse(payload.handleContractPairs);
      }
      case relayer.RELAYER_V1_DELEGATED_USER_DECRYPT: {
        const payload = args[0];
        relayer.assertIsRelayerV1DelegatedUserDecryptPayload(payload);
        await checkAccess(payload, payload.delegatorAddress);
        await MockFhevmInstance.verifyDelegatedUserDecryptSignature({
          publicKey: payload.publicKey,
          signature: payload.signature,
          contractAddresses: payload.contractAddresses,
          delegatorAddress: payload.delegatorAddress,
          delegateAddress: payload.delegateAddress,
          startTimestamp: Number(payload.requestValidity.startTimestamp),
          durationDays: Number(payload.requestValidity.durationDays),
          verifyingContractAddressDecryption: kmsVerifier.gatewayDecryptionAddress,
          contractsChainId: MOCK_CHAIN_ID,
        });
        await MockFhevmInstance.verifyUserDecryptionDelegation(
          readonlyProvider,
          addresses.acl,
          payload.delegatorAddress,
          payload.delegateAddress,
          payload.handleContractPairs,
        );
        return userDecryptResponse(payload.handleContractPairs);
      }
      default:
        throw new RelayerRequestError(`${method} is not a relayer method`);
    }
  };

  const instance = await MockFhevmInstance.create(
    relayerProvider,
    readonlyProvider,
    {
      verifyingContractAddressDecryption: kmsVerifier.gatewayDecryptionAddress,
      verifyingContractAddressInputVerification: inputVerifier.gatewayInputVerificationAddress,
      kmsContractAddress: addresses.kmsVerifier,
      inputVerifierContractAddress: addresses.inputVerifier,
      aclContractAddress: addresses.acl,
      chainId: MOCK_CHAIN_ID,
      gatewayChainId: Number(kmsVerifier.gatewayChainId),
    },
    {
      inputVerifierProperties: inputVerifier.inputVerifierProperties,
      kmsVerifierProperties: kmsVerifier.kmsVerifierProperties,
    },
  );

  return {
    instance,
    addresses,
    insertInputs,
    serveRelayer,
    async countHandles() {
      await coprocessor.awaitCoprocessor();
      return db.countHandles;
    },
    catchUp: () => decryptOneAtATime(() => coprocessor.awaitCoprocessor()),
    rewind: (blockNumber) =>
      decryptOneAtATime(async () => {
        db.rewind(blockNumber);
        coprocessor = await createCoprocessor();
      }),
    saveDatabase: () =>
      decryptOneAtATime(async () => {
        const head = Number(await readonlyProvider.getBlockNumber());
        await coprocessor.awaitCoprocessor();
        if (Number(await readonlyProvider.getBlockNumber()) !== head) {
          throw new Error('A block was mined while the coprocessor was being saved');
        }
        return db.save(head + 1);
      }),
  };
}

const MOCK_CHAIN_ID = 31337;
const MAX_GRANT_DAYS = 365;

/** A relayer request the mock refuses (bad payload, no permission): answered as a JSON-RPC error. */
export class RelayerRequestError extends Error {
  override name = 'RelayerRequestError';
}

/** The relayer SDK's checks of a grant before it is sent: within its validity window, for this chain. */
function checkGrant(payload: {
  contractsChainId: string;
  requestValidity: { startTimestamp: string; durationDays: string };
}): void {
  if (Number(payload.contractsChainId) !== MOCK_CHAIN_ID) {
    throw new RelayerRequestError(`contractsChainId ${payload.contractsChainId} is not this chain`);
  }
  const start = Number(payload.requestValidity.startTimestamp);
  const days = Number(payload.requestValidity.durationDays);
  const now = Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(days) || days <= 0 || days > MAX_GRANT_DAYS) {
    throw new RelayerRequestError('Invalid request validity');
  }
  if (start > now) throw new RelayerRequestError('The grant starts in the future');
  if (start + days * 86400 < now) throw new RelayerRequestError('The grant has expired');
}

export { RELAYER_METHODS } from './relayer-methods.ts';
