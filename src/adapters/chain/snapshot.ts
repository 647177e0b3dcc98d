/**
 * Snapshots of the embedded network (`{dataDir}/chain/snapshots/`): the chain's state as anvil dumps it (accounts,
 * blocks, transactions, receipts), the mock coprocessor's handle database, and the journal position they cover.
 * At start the newest valid snapshot is loaded and only the journal entries after its position are replayed.
 *
 * - One file per snapshot, named by the number of journal entries it covers (`000000001500.snapshot`): a header line
 *   `sealpay-chain-snapshot 1 <sha256 of the body> <body bytes>`, then the body (JSON).
 * - Written atomically: a temporary file, fsync, rename, fsync of the directory. A crash mid-write leaves a
 *   temporary file, which is ignored and removed; a file that does not match its header is ignored.
 * - The two newest are kept: if the newest cannot be used, the one before it can, and else the whole journal.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../lib/secrets.ts';
import { type CoprocessorState, isCoprocessorState } from '../confidential/fhevm-db.ts';
import { compactDump } from './anvil-dump.ts';
import type { JournalEntry, JournalPosition } from './journal.ts';
import type { NodeExtras } from './journaled-chain.ts';

/**
 * What one snapshot file holds: anvil's dumped state, the coprocessor's handles, and the journal position
 * they cover.
 */
export interface ChainSnapshot {
  version: 1;
  /** The journal entries it covers: all of those before this position, none after. */
  journal: JournalPosition;
  /** The chain's latest block when it was taken: checked once the state is loaded. */
  head: { number: number; hash: string };
  /** The journaled chain's clock offset (seconds added to wall time for new blocks). */
  clockOffset: number;
  /** `anvil_dumpState` (gzip'ed JSON, hex), without call traces (anvil-dump.ts). */
  chain: string;
  /** What the dump lacks: the pool's transactions, impersonated accounts, a next block's base fee. */
  node: NodeExtras;
  coprocessor: CoprocessorState;
}

const MAGIC = 'sealpay-chain-snapshot';
const FORMAT_VERSION = 1;
const KEEP = 2;
const NAME = /^(\d{12})\.snapshot$/;

/**
 * The file name of the snapshot covering `entries` journal entries (zero-padded, so names sort as numbers).
 */
export function snapshotFileName(entries: number): string {
  return `${String(entries).padStart(12, '0')}.snapshot`;
}

/** The snapshot files in `dir`, newest (most journal entries covered) first. */
export function listSnapshots(dir: string): { file: string; entries: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .flatMap((name) => {
      const match = NAME.exec(name);
      return match ? [{ file: path.join(dir, name), entries: Number(match[1]) }] : [];
    })
    .sort((a, b) => b.entries - a.entries);
}

function isNodeExtras(value: unknown): value is NodeExtras {
  if (typeof value !== 'object' || value === null) return false;
  const extras = value as Record<string, unknown>;
  return (
    Array.isArray(extras.pool) &&
    extras.pool.every(
      (tx: { hash?: unknown; m?: unknown }) => typeof tx?.hash === 'string' && typeof tx.m === 'string',
    ) &&
    Array.isArray(extras.impersonated) &&
    extras.impersonated.every((address) => typeof address === 'string') &&
    'nextBaseFee' in extras
  );
}

function isPosition(value: unknown): value is JournalPosition {
  if (typeof value !== 'object' || value === null) return false;
  const position = value as Record<string, unknown>;
  const last = position.lastEntry as Record<string, unknown> | null | undefined;
  return (
    Number.isSafeInteger(position.entries) &&
    Number.isSafeInteger(position.bytes) &&
    (last === null ||
      (typeof last === 'object' &&
        last !== undefined &&
        Number.isSafeInteger(last.bytes) &&
        typeof last.sha256 === 'string'))
  );
}

/** Reads and checks one snapshot file; throws with the reason when it cannot be used. */
export function readSnapshot(file: string): ChainSnapshot {
  const data = readFileSync(file);
  const newline = data.indexOf(0x0a);
  if (newline === -1) throw new Error('no header line');
  const [magic, version, hash, length] = data.toString('utf8', 0, newline).split(' ');
  if (magic !== MAGIC || Number(version) !== FORMAT_VERSION)
    throw new Error('not a snapshot of this version');
  const body = data.subarray(newline + 1);
  if (body.length !== Number(length)) {
    throw new Error(`torn: ${body.length} of ${length} bytes`);
  }
  if (sha256Hex(body) !== hash) throw new Error('its content does not match its checksum');
  const snapshot = JSON.parse(body.toString('utf8')) as ChainSnapshot;
  const match = NAME.exec(path.basename(file));
  if (
    snapshot.version !== FORMAT_VERSION ||
    !isPosition(snapshot.journal) ||
    (match !== null && Number(match[1]) !== snapshot.journal.entries) ||
    typeof snapshot.head?.hash !== 'string' ||
    !Number.isSafeInteger(snapshot.head.number) ||
    !Number.isSafeInteger(snapshot.clockOffset) ||
    typeof snapshot.chain !== 'string' ||
    !snapshot.chain.startsWith('0x') ||
    !isNodeExtras(snapshot.node) ||
    !isCoprocessorState(snapshot.coprocessor)
  ) {
    throw new Error('malformed content');
  }
  return snapshot;
}

async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** What a snapshot covers, for `rewindsPast`: its journal entries and the block it was taken at. */
export interface SnapshotCover {
  entries: number;
  headNumber: number;
}

/**
 * True when `entry` (after the snapshot in the journal) goes back to something a replay on the snapshot's state
 * cannot reach: an `evm_snapshot` taken before it, or a block anvil holds no state of after loading it (the state
 * of a block is kept only by the process that mined it). Such a snapshot cannot start the journal after it.
 */
export function rewindsPast(entry: JournalEntry, cover: SnapshotCover): boolean {
  switch (entry.k) {
    case 'revert':
      return entry.to < cover.entries;
    case 'rollback':
    case 'reorg':
      return entry.block <= cover.headNumber;
    default:
      return false;
  }
}

/** Writes a snapshot atomically and durably, then removes all but the newest `KEEP`. Returns its file. */
export async function writeSnapshot(dir: string, snapshot: ChainSnapshot): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const body = Buffer.from(JSON.stringify(snapshot), 'utf8');
  const header = Buffer.from(`${MAGIC} ${FORMAT_VERSION} ${sha256Hex(body)} ${body.length}\n`, 'utf8');
  const file = path.join(dir, snapshotFileName(snapshot.journal.entries));
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(Buffer.concat([header, body]));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await fsyncDirectory(dir);
  for (const old of listSnapshots(dir).slice(KEEP)) rmSync(old.file, { force: true });
  return file;
}

/** Removes temporary files left by a snapshot write that a crash interrupted. */
export function removeTornSnapshotWrites(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) if (name.endsWith('.tmp')) rmSync(path.join(dir, name), { force: true });
}

/** Where the snapshotter writes, how often, and what the newest snapshot on disk already covers. */
export interface SnapshotterOptions {
  dir: string;
  /** Journal entries between two snapshots (at least). */
  every: number;
  /** Entries the newest snapshot on disk covers (0 when there is none), and the block it was taken at (-1). */
  coveredEntries: number;
  coveredHead: number;
  /** The journal's current length. */
  journalEntries: () => number;
  /** Work that shortens `capture` and needs the chain not held still (the coprocessor reads new events). */
  prepare: () => Promise<void>;
  /**
   * Takes the snapshot's content while the chain is held still (`chain` as anvil dumps it), or null when the
   * journal has not grown since the last snapshot.
   */
  capture: () => Promise<ChainSnapshot | null>;
  log: { info(message: string): void; error(message: string): void };
}

/** Share of the time the chain may be held still by snapshots: anvil's dump grows with the history it holds. */
const HELD_SHARE = 0.1;

/**
 * Takes a snapshot every `every` journal entries, in the background: the request that crossed the line does not
 * wait for it, and the chain is held still only while anvil dumps its state, not while the dump is compacted and
 * written. Anvil's dump takes longer as its history grows, so snapshots are also spaced so that the chain is held
 * still at most a tenth of the time. A last one is taken at a graceful stop. A failed snapshot is logged and tried
 * again later: the journal holds everything meanwhile.
 */
export class Snapshotter {
  readonly #options: SnapshotterOptions;
  #covered: SnapshotCover;
  #attempted: number;
  #notBefore = 0;
  #running: Promise<void> | null = null;
  /** The newest snapshot cannot start the journal as it now is (`rewindsPast`): the next one is due at once. */
  #outdated = false;

  constructor(options: SnapshotterOptions) {
    this.#options = options;
    this.#covered = { entries: options.coveredEntries, headNumber: options.coveredHead };
    this.#attempted = options.coveredEntries;
  }

  /** Journal entries the newest snapshot covers. */
  get coveredEntries(): number {
    return this.#covered.entries;
  }

  /** Called after each journal entry: starts a snapshot when enough entries and time have passed. */
  onJournaled(): void {
    if (!this.#outdated && this.#options.journalEntries() - this.#attempted < this.#options.every) return;
    if (performance.now() < this.#notBefore) return;
    this.takeInBackground();
  }

  /**
   * Called after the chain went back (`entry`): when the newest snapshot can no longer start the journal, a start
   * would fall back to an older one (or to the whole journal) until the next snapshot, which is taken soon.
   */
  onRewind(entry: JournalEntry): void {
    // While one is being taken, which it covers is not known yet: another follows it.
    if (!this.#running && !rewindsPast(entry, this.#covered)) return;
    this.#outdated = true;
    this.onJournaled();
  }

  /** Starts a snapshot unless one is being taken. */
  takeInBackground(): void {
    if (this.#running) return;
    this.#running = this.#take().finally(() => {
      this.#running = null;
      if (this.#outdated) this.onJournaled();
    });
  }

  /** Waits for a snapshot being taken, then takes one if the journal has grown since (graceful stop). */
  async takeFinal(): Promise<void> {
    await this.#running;
    if (this.#options.journalEntries() > this.#covered.entries) await this.#take();
  }

  async #take(): Promise<void> {
    const started = performance.now();
    this.#attempted = this.#options.journalEntries();
    const outdated = this.#outdated;
    this.#outdated = false;
    let heldMs = 0;
    try {
      await this.#options.prepare();
      const prepared = performance.now();
      const captured = await this.#options.capture();
      const capturedAt = performance.now();
      heldMs = capturedAt - prepared;
      if (!captured) return;
      const snapshot = { ...captured, chain: await compactDump(captured.chain) };
      const compactedAt = performance.now();
      const file = await writeSnapshot(this.#options.dir, snapshot);
      this.#covered = { entries: snapshot.journal.entries, headNumber: snapshot.head.number };
      this.#options.log.info(
        `chain snapshot ${path.basename(file)} (${snapshot.journal.entries} journal entries, block ${snapshot.head.number}): chain held ${Math.round(heldMs)} ms, then compacted in ${Math.round(compactedAt - capturedAt)} ms and written in ${Math.round(performance.now() - compactedAt)} ms (${Math.round(prepared - started)} ms of preparation before)`,
      );
    } catch (error) {
      this.#outdated ||= outdated;
      this.#options.log.error(
        `chain snapshot failed (the journal holds everything): ${(error as Error).message}`,
      );
    } finally {
      this.#notBefore = performance.now() + heldMs * (1 / HELD_SHARE - 1);
    }
  }
}
