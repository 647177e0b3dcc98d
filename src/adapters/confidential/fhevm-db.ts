/**
 * The mock coprocessor's handle database (handle → clear value, the random counter, the block it starts reading
 * the executor's events from), kept as `FhevmDBMap` of `@fhevm/mock-utils` keeps it, and in addition saved into the
 * embedded network's snapshots and restored from them: a restart then reads only the events after the snapshot's
 * block instead of every event since genesis.
 */
import type { MockCoprocessor } from '@fhevm/mock-utils';

/** The `FhevmDB` interface of `@fhevm/mock-utils` (not exported by name). */
type FhevmDB = Parameters<typeof MockCoprocessor.create>[1]['db'];
type FhevmDBEntry = Awaited<ReturnType<FhevmDB['queryHandleBytes32']>>;
type FhevmDBHandleMetadata = FhevmDBEntry['metadata'];

/** What a snapshot holds of the coprocessor. */
export interface CoprocessorState {
  /** The first block whose executor events are not in `handles` yet. */
  fromBlockNumber: number;
  randomCounter: number;
  /** `[handle, "block:index:txHash:clearText"]`, the entry format of `FhevmDBMap`. */
  handles: [string, string][];
}

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** Whether `value` has the shape of a saved `CoprocessorState` (checked before a snapshot is used). */
export function isCoprocessorState(value: unknown): value is CoprocessorState {
  if (typeof value !== 'object' || value === null) return false;
  const state = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(state.fromBlockNumber) &&
    (state.fromBlockNumber as number) >= 0 &&
    Number.isSafeInteger(state.randomCounter) &&
    Array.isArray(state.handles) &&
    state.handles.every(
      (pair) =>
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        BYTES32.test(pair[0]) &&
        typeof pair[1] === 'string',
    )
  );
}

function entryToString(clearText: string, metadata: FhevmDBHandleMetadata): string {
  return `${metadata.blockNumber}:${metadata.index}:${metadata.transactionHash}:${clearText}`;
}

function blockOf(text: string): number {
  return Number.parseInt(text.slice(0, text.indexOf(':')), 10);
}

function stringToEntry(text: string): FhevmDBEntry {
  const [blockNumber, index, transactionHash, clearTextHex] = text.split(':');
  return {
    clearTextHex: clearTextHex ?? '0x',
    metadata: {
      blockNumber: Number.parseInt(blockNumber ?? '0', 10),
      index: Number.parseInt(index ?? '0', 10),
      transactionHash: transactionHash ?? '',
    },
  };
}

/**
 * The mock coprocessor's handle database, which a snapshot can save and restore (see the top of this file).
 */
export class SnapshotFhevmDB implements FhevmDB {
  #handles: Map<string, string>;
  #randomCounter: number;
  #fromBlockNumber: number;

  /** An empty database reading from genesis, or the one a snapshot saved. */
  constructor(saved?: CoprocessorState) {
    this.#handles = new Map(saved?.handles ?? []);
    this.#randomCounter = saved?.randomCounter ?? 0;
    this.#fromBlockNumber = saved?.fromBlockNumber ?? 0;
  }

  async init(fromBlockNumber: number): Promise<boolean> {
    this.#fromBlockNumber = fromBlockNumber;
    return true;
  }

  get countHandles(): number {
    return this.#handles.size;
  }

  get randomCounter(): number {
    return this.#randomCounter;
  }

  get fromBlockNumber(): number {
    return this.#fromBlockNumber;
  }

  incRand(): void {
    this.#randomCounter++;
  }

  async reset(): Promise<void> {
    this.#handles.clear();
  }

  /**
   * A handle computed again (handles are hashes of their operation and operands: the same computation in a later
   * block gives the same handle and value) keeps the block it was first computed in, so that `rewind` keeps it while
   * that block stays; a random value (`replace`) is taken as new.
   */
  async insertHandleBytes32(
    handleBytes32Hex: string,
    clearText: bigint | string,
    metadata: FhevmDBHandleMetadata,
    options?: { replace?: boolean },
  ): Promise<void> {
    if (!BYTES32.test(handleBytes32Hex)) throw new Error(`Not a bytes32 handle: ${handleBytes32Hex}`);
    const known = this.#handles.get(handleBytes32Hex);
    if (known !== undefined && options?.replace !== true && blockOf(known) <= metadata.blockNumber) return;
    // As FhevmDBMap: a bigint is kept as its decimal text, a string as given (hex); both read back with BigInt().
    this.#handles.set(handleBytes32Hex, entryToString(clearText.toString(), metadata));
  }

  async tryInsertHandleBytes32(
    handleBytes32Hex: string,
    clearText: bigint | string,
    metadata: FhevmDBHandleMetadata,
    options?: { replace?: boolean },
  ): Promise<boolean> {
    try {
      await this.insertHandleBytes32(handleBytes32Hex, clearText, metadata, options);
      return true;
    } catch {
      return false;
    }
  }

  async queryHandleBytes32(handleBytes32Hex: string): Promise<FhevmDBEntry> {
    const entry = this.#handles.get(handleBytes32Hex);
    if (entry === undefined) throw new Error(`Handle ${handleBytes32Hex} does not exist.`);
    return stringToEntry(entry);
  }

  async tryQueryHandleBytes32(handleBytes32Hex: string): Promise<FhevmDBEntry | undefined> {
    const entry = this.#handles.get(handleBytes32Hex);
    return entry === undefined ? undefined : stringToEntry(entry);
  }

  /**
   * The chain went back to block `blockNumber`: the handles computed in the blocks after it are forgotten (a
   * decryption answers for the chain as it now is) and the executor's events are read again from the block after it.
   * Input handles (block 0) stay: they are the relayer's, not the chain's.
   */
  rewind(blockNumber: number): void {
    for (const [handle, entry] of this.#handles) {
      if (blockOf(entry) > blockNumber) this.#handles.delete(handle);
    }
    this.#fromBlockNumber = Math.min(this.#fromBlockNumber, blockNumber + 1);
  }

  /** The database's content, for a snapshot taken when every event before `fromBlockNumber` has been read. */
  save(fromBlockNumber: number): CoprocessorState {
    return { fromBlockNumber, randomCounter: this.#randomCounter, handles: [...this.#handles] };
  }
}
