/**
 * The embedded chain's journal: one JSON object per line, appended and fsync'ed before the request that produced
 * it returns. Replaying it on a fresh EVM (same genesis) reproduces the chain block for block.
 *
 * A line torn by a crash (kill -9 in the middle of a write) can only be the last one: it is dropped, and the file
 * is truncated back to the last complete line before anything new is appended. A malformed line anywhere else
 * means the file was damaged and is refused.
 */
import { mkdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';

export type JournalEntry =
  /** A state-changing call that mines nothing (hardhat_setCode, hardhat_setStorageAt, hardhat_setBalance…). */
  | { k: 'rpc'; m: string; p: unknown }
  /** A transaction submitted (eth_sendRawTransaction / eth_sendTransaction), then one block mined at `ts`. */
  | { k: 'tx'; m: string; p: unknown; ts: number }
  /** `n` empty (or mempool-draining) blocks mined, the first at `ts`, then every `interval` seconds. */
  | { k: 'mine'; ts: number; n?: number; interval?: number }
  /** The clock offset (seconds added to wall time for new blocks) after an evm_increaseTime / setNextBlockTimestamp. */
  | { k: 'clock'; offset: number }
  /** Clear values of encrypted inputs registered with the fhEVM mock (its handle database lives in memory). */
  | { k: 'input'; handles: string[]; values: string[] };

export interface JournalReadResult {
  entries: JournalEntry[];
  /** Bytes dropped at the end (a torn last line). */
  droppedBytes: number;
}

/** Reads a journal file, tolerating (and truncating) a torn last line. A missing file is an empty journal. */
export function readJournal(file: string): JournalReadResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], droppedBytes: 0 };
    throw error;
  }
  const entries: JournalEntry[] = [];
  let offset = 0;
  let goodBytes = 0;
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    const line = end === -1 ? text.slice(offset) : text.slice(offset, end);
    const isLast = end === -1 || end === text.length - 1;
    let parsed: JournalEntry | undefined;
    if (end !== -1) {
      try {
        parsed = JSON.parse(line) as JournalEntry;
      } catch {
        parsed = undefined;
      }
    }
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null || !('k' in parsed)) {
      if (!isLast)
        throw new Error(`Chain journal ${file} is damaged at byte ${offset} (not a torn last line)`);
      break;
    }
    entries.push(parsed);
    offset = end + 1;
    goodBytes += Buffer.byteLength(line, 'utf8') + 1;
  }
  const totalBytes = statSync(file).size;
  const droppedBytes = totalBytes - goodBytes;
  if (droppedBytes > 0) truncateSync(file, goodBytes);
  return { entries, droppedBytes };
}

export class Journal {
  readonly file: string;
  #handle: FileHandle;
  #count: number;

  private constructor(file: string, handle: FileHandle, count: number) {
    this.file = file;
    this.#handle = handle;
    this.#count = count;
  }

  /** Opens for appending (after `readJournal` has cut any torn tail). */
  static async open(file: string, existingEntries: number): Promise<Journal> {
    mkdirSync(path.dirname(file), { recursive: true });
    const handle = await open(file, 'a', 0o600);
    return new Journal(file, handle, existingEntries);
  }

  get count(): number {
    return this.#count;
  }

  /** Appends one entry and waits until it is on disk. */
  async append(entry: JournalEntry): Promise<void> {
    await this.#handle.write(`${JSON.stringify(entry)}\n`);
    await this.#handle.datasync();
    this.#count++;
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}
