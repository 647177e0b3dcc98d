/**
 * The embedded chain's journal: one JSON object per line, appended and fsync'ed before the request that produced
 * it returns. Replaying it on a fresh EVM (same genesis) reproduces the chain block for block; replaying the part
 * after a snapshot's position on the loaded snapshot does the same from there.
 *
 * A line torn by a crash (kill -9 in the middle of a write) can only be the last one: it is dropped, and the file
 * is truncated back to the last complete line before anything new is appended. A malformed line anywhere else
 * means the file was damaged and is refused.
 */
import { closeSync, mkdirSync, openSync, readSync, statSync, truncateSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../lib/secrets.ts';

/**
 * One line of the journal: a request that changed the chain, with what a replay needs to repeat it exactly.
 */
export type JournalEntry =
  /**
   * A state-changing call that mines nothing (hardhat_setCode, hardhat_setStorageAt, hardhat_setBalance…,
   * anvil_dropTransaction), or a transaction submitted to the pool while automine is off (mined by a later `mine`).
   */
  | { k: 'rpc'; m: string; p: unknown }
  /** A transaction submitted (eth_sendRawTransaction / eth_sendTransaction), then one block mined at `ts`. */
  | { k: 'tx'; m: string; p: unknown; ts: number }
  /** `n` empty (or mempool-draining) blocks mined, the first at `ts`, then every `interval` seconds. */
  | { k: 'mine'; ts: number; n?: number; interval?: number }
  /** The clock offset (seconds added to wall time for new blocks) after an evm_increaseTime / setNextBlockTimestamp. */
  | { k: 'clock'; offset: number }
  /** Clear values of encrypted inputs registered with the fhEVM mock (its handle database lives in memory). */
  | { k: 'input'; handles: string[]; values: string[] }
  /** `evm_snapshot`: anvil's own state snapshot, taken again by a replay only when a later `revert` names it. */
  | { k: 'snapshot' }
  | RewindEntry;

/**
 * An entry that takes the chain back to an earlier block: the blocks after `block` are gone (a reorg mines new ones
 * in their place), and the clock is set back as anvil sets it (`offset`: the clock offset after it). A replay can
 * reproduce one only from a point before what it goes back to (see `rewindsPast` in snapshot.ts).
 */
export type RewindEntry =
  /** `evm_revert` to the `snapshot` entry at journal index `to`, whose block was `block`. */
  | { k: 'revert'; to: number; block: number; offset: number }
  /** `anvil_rollback` by `depth` blocks, to block `block`. */
  | { k: 'rollback'; depth: number; block: number; offset: number }
  /**
   * `anvil_reorg` (`p`: its params as given, depth and transaction/block pairs): rolled back to `block`, then
   * `depth` blocks mined one second apart from that block's timestamp.
   */
  | { k: 'reorg'; p: unknown; block: number; offset: number };

/**
 * A point in the journal: its first `entries` entries, which end at byte `bytes`, the last of them `lastEntry`
 * (its length in bytes with the newline, and its SHA-256), so that a snapshot can tell whether the journal it is
 * read with still holds the entries it covers.
 */
export interface JournalPosition {
  entries: number;
  bytes: number;
  lastEntry: { bytes: number; sha256: string } | null;
}

/** The position before the first entry: read the whole journal from here. */
export const JOURNAL_START: JournalPosition = { entries: 0, bytes: 0, lastEntry: null };

/** What reading the journal from a position gave: the entries, the torn bytes dropped, and the new end. */
export interface JournalReadResult {
  /** The entries after the position read from. */
  entries: JournalEntry[];
  /** Bytes dropped at the end (a torn last line). */
  droppedBytes: number;
  /** The position after the last complete entry. */
  end: JournalPosition;
}

const NEWLINE = 0x0a;

function readRange(file: string, start: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  if (length === 0) return buffer;
  const fd = openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const read = readSync(fd, buffer, done, length - done, start + done);
      if (read === 0) break;
      done += read;
    }
    return done === length ? buffer : buffer.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** True when the journal still holds the entries up to `position` as they were written (cheap: one line is read). */
export function journalHolds(file: string, position: JournalPosition): boolean {
  if (position.entries === 0) return position.bytes === 0;
  const last = position.lastEntry;
  if (!last || last.bytes <= 0 || last.bytes > position.bytes) return false;
  if (fileSize(file) < position.bytes) return false;
  const line = readRange(file, position.bytes - last.bytes, last.bytes);
  return line.length === last.bytes && line[line.length - 1] === NEWLINE && sha256Hex(line) === last.sha256;
}

/**
 * Reads a journal file from `from` (a position `journalHolds` confirmed; the start by default), tolerating (and
 * truncating) a torn last line. A missing file is an empty journal.
 */
export function readJournal(file: string, from: JournalPosition = JOURNAL_START): JournalReadResult {
  const size = fileSize(file);
  if (size < from.bytes) throw new Error(`Chain journal ${file} is shorter than the position read from`);
  const data = readRange(file, from.bytes, size - from.bytes);
  const entries: JournalEntry[] = [];
  let offset = 0;
  let lastLine: Buffer | null = null;
  while (offset < data.length) {
    const end = data.indexOf(NEWLINE, offset);
    let parsed: JournalEntry | undefined;
    if (end !== -1) {
      try {
        parsed = JSON.parse(data.toString('utf8', offset, end)) as JournalEntry;
      } catch {
        parsed = undefined;
      }
    }
    if (parsed === undefined || typeof parsed !== 'object' || parsed === null || !('k' in parsed)) {
      const isLast = end === -1 || end === data.length - 1;
      if (!isLast) {
        throw new Error(
          `Chain journal ${file} is damaged at byte ${from.bytes + offset} (not a torn last line)`,
        );
      }
      break;
    }
    entries.push(parsed);
    lastLine = data.subarray(offset, end + 1);
    offset = end + 1;
  }
  const goodBytes = from.bytes + offset;
  if (size > goodBytes) truncateSync(file, goodBytes);
  return {
    entries,
    droppedBytes: size - goodBytes,
    end: {
      entries: from.entries + entries.length,
      bytes: goodBytes,
      lastEntry: lastLine ? { bytes: lastLine.length, sha256: sha256Hex(lastLine) } : from.lastEntry,
    },
  };
}

/** The journal file opened for appending: each entry written and fsync'ed before `append` returns. */
export class Journal {
  readonly file: string;
  #handle: FileHandle;
  #position: JournalPosition;

  private constructor(file: string, handle: FileHandle, position: JournalPosition) {
    this.file = file;
    this.#handle = handle;
    this.#position = position;
  }

  /** Opens for appending at `end` (where `readJournal` left the file, any torn tail cut). */
  static async open(file: string, end: JournalPosition): Promise<Journal> {
    mkdirSync(path.dirname(file), { recursive: true });
    const handle = await open(file, 'a', 0o600);
    return new Journal(file, handle, end);
  }

  get count(): number {
    return this.#position.entries;
  }

  /** Where the journal ends (every entry in it is on disk). */
  get position(): JournalPosition {
    return this.#position;
  }

  /** Appends one entry and waits until it is on disk. */
  async append(entry: JournalEntry): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    await this.#handle.write(line);
    await this.#handle.datasync();
    this.#position = {
      entries: this.#position.entries + 1,
      bytes: this.#position.bytes + line.length,
      lastEntry: { bytes: line.length, sha256: sha256Hex(line) },
    };
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}
