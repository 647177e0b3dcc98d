/**
 * An EIP-1193 front of the embedded EVM that journals every state-changing request.
 *
 * - Reads pass straight through.
 * - State-changing requests are serialized (one at a time, in arrival order), executed, appended to the journal
 *   and fsync'ed before they return, so the journal is always the exact sequence the chain executed.
 * - Every block is mined by us with an explicit timestamp (`evm_mine(ts)`): a submitted transaction is followed by
 *   one block (automine), and the journal records that timestamp, so a replay reproduces identical blocks and hashes.
 * - The development methods of anvil (dev-methods.ts) are journaled so that a replay reproduces them: with automine
 *   off a submission goes to the pool (an `rpc` entry, submitted again by a replay); interval mining is our own timer,
 *   each block journaled as a `mine` with its timestamp; `evm_snapshot`/`evm_revert`, `anvil_rollback` and
 *   `anvil_reorg` (anvil's own, its reorg blocks one second apart) are entries a replay repeats, and after each the
 *   next base fee anvil holds is kept aside, since a snapshot's load would compute another from the head. The mining
 *   mode and `evm_snapshot` ids are the running process's (a restart starts from its options and no ids, as anvil
 *   started again on its `--state` does). `hardhat_reset` is refused.
 * - What an anvil state dump does not hold, and a replay of the journal would rebuild, is kept aside for snapshots
 *   (`NodeExtras`): transactions still waiting in the pool (a nonce gap), impersonated accounts, a next block's base
 *   fee set and not yet used.
 */
import {
  asParams,
  canonicalMethod,
  mineOptions,
  reorgDepth,
  toBoolean,
  toNumber,
  toQuantity,
} from './dev-methods.ts';
import { type Eip1193, RpcError } from './evm.ts';
import type { Journal, JournalEntry, RewindEntry } from './journal.ts';

const SUBMIT_METHODS = new Set(['eth_sendRawTransaction', 'eth_sendTransaction']);

/** EIP-7966: submit, and answer with the receipt once mined (here: at once). Journaled as the plain method. */
const SYNC_SUBMIT_METHODS = new Map([
  ['eth_sendRawTransactionSync', 'eth_sendRawTransaction'],
  ['eth_sendTransactionSync', 'eth_sendTransaction'],
]);

/** Cheat codes that change state without mining: replayed verbatim. */
const STATE_METHODS = new Set([
  'hardhat_setCode',
  'hardhat_setStorageAt',
  'hardhat_setBalance',
  'hardhat_setNonce',
  'hardhat_impersonateAccount',
  'hardhat_stopImpersonatingAccount',
  'hardhat_setCoinbase',
  'hardhat_setPrevRandao',
  'hardhat_setMinGasPrice',
  'hardhat_setNextBlockBaseFeePerGas',
  'hardhat_dropTransaction',
  'anvil_dropAllTransactions',
  'evm_setBlockGasLimit',
]);

/** Methods that mine, move the clock, switch mining or go back in history: handled here (`#write`). */
const OWN_METHODS = new Set([
  'evm_mine',
  'hardhat_mine',
  'evm_increaseTime',
  'evm_setNextBlockTimestamp',
  'evm_setAutomine',
  'evm_setIntervalMining',
  'evm_snapshot',
  'evm_revert',
  'anvil_rollback',
  'anvil_reorg',
]);

/** Need anvil's history (its reorg, rollback and state snapshots): refused on EDR. */
const ANVIL_ONLY_METHODS = new Set(['evm_snapshot', 'evm_revert', 'anvil_rollback', 'anvil_reorg']);

const REFUSED_METHODS = new Set([
  // Anvil would put the transaction in its pool without it passing here: the journal would not hold it.
  'eth_sendUnsignedTransaction',
  'hardhat_reset',
  'hardhat_setLoggingEnabled',
  'hardhat_addCompilationResult',
]);

const READ_PREFIXES = ['eth_', 'net_', 'web3_', 'debug_', 'txpool_'];
const READ_METHODS = new Set(['hardhat_metadata']);

/** Blocks one `evm_mine`/`hardhat_mine` may mine (each is an `evm_mine` of the engine, replayed at every start). */
const MAX_BLOCKS_AT_ONCE = 10_000;

/** Anvil's wait for an `eth_send*Sync` transaction to be mined (automine off). */
const SYNC_TIMEOUT_MS = 30_000;

/** True for requests that the journaled chain executes under its write lock (and journals). */
export function isStateChanging(method: string): boolean {
  const name = canonicalMethod(method);
  return (
    SUBMIT_METHODS.has(name) ||
    SYNC_SUBMIT_METHODS.has(name) ||
    STATE_METHODS.has(name) ||
    OWN_METHODS.has(name)
  );
}

/** What a snapshot of anvil's state lacks of the chain a replay of the journal would rebuild. */
export interface NodeExtras {
  /** Transactions waiting in the pool, in the order they were submitted: submitted again at a restore. */
  pool: { hash: string; m: string; p: unknown }[];
  /** Accounts impersonated (`hardhat_impersonateAccount`), lowercase. */
  impersonated: string[];
  /** A `hardhat_setNextBlockBaseFeePerGas` not yet used by a block. */
  nextBaseFee: unknown;
}

/** Submissions kept (for a snapshot's pool) before the pool is checked for emptiness. */
const TRACKED_SUBMISSIONS = 64;

interface Head {
  number: number;
  hash: string;
  timestamp: number;
}

/**
 * The EIP-1193 front of the embedded EVM that journals every state-changing request (see the top of this
 * file).
 */
export class JournaledChain implements Eip1193 {
  readonly #edr: Eip1193;
  readonly #rewrites: boolean;
  #journal: Journal | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #clockOffset = 0;
  #nextTimestamp: number | null = null;
  #lastTimestamp = 0;
  #broken: Error | null = null;
  #now: () => number;
  /** Called for each `input` entry during replay (the fhEVM mock re-registers those clear values). */
  onInputEntry: ((entry: Extract<JournalEntry, { k: 'input' }>) => Promise<void>) | null = null;
  /** Called after each entry appended to the journal (the embedded network counts them to take snapshots). */
  onJournaled: (() => void) | null = null;
  /**
   * Called after the chain went back to an earlier block, live (once journaled) and in a replay: the fhEVM mock
   * forgets the handles of the blocks that are gone.
   */
  onRewind: ((entry: RewindEntry) => Promise<void>) | null = null;
  /** Transactions submitted that may still be in the pool, in submission order (hash → request). */
  #submitted = new Map<string, { m: string; p: unknown }>();
  #impersonated = new Set<string>();
  #nextBaseFee: unknown = null;
  /** Automine (anvil's instant mining); off with interval mining or after `evm_setAutomine(false)`. */
  #automine = true;
  #intervalSeconds: number | null = null;
  #intervalTimer: NodeJS.Timeout | null = null;
  /** Bumped at every change of mining mode: a tick of an earlier interval mines nothing. */
  #intervalGeneration = 0;
  /** Woken after each block mined (and each rewind): `eth_send*Sync` waits on it while automine is off. */
  #blockWaiters = new Set<() => void>();
  /** `evm_snapshot` ids handed out by this process → anvil's id and the journal index of the `snapshot` entry. */
  #stateSnapshots = new Map<number, { anvilId: unknown; entry: number; blockHash: string }>();
  #nextSnapshotId = 0;
  /** During a replay: `snapshot` entries a later `revert` names (journal index), and anvil's ids for those taken. */
  #replayTargets = new Set<number>();
  #replaySnapshots = new Map<number, unknown>();

  /**
   * `clockOffset`: the offset a snapshot saved, when the chain was loaded from one. `rewrites`: the engine keeps the
   * history `evm_snapshot`/`evm_revert`, `anvil_rollback` and `anvil_reorg` need (anvil; not EDR).
   */
  constructor(edr: Eip1193, options: { now?: () => number; clockOffset?: number; rewrites?: boolean } = {}) {
    this.#edr = edr;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#clockOffset = options.clockOffset ?? 0;
    this.#rewrites = options.rewrites ?? false;
  }

  /** Seconds added to wall time for new blocks (evm_increaseTime, evm_setNextBlockTimestamp). */
  get clockOffset(): number {
    return this.#clockOffset;
  }

  /** Reads the latest block's timestamp; call once before use. */
  async init(): Promise<void> {
    this.#lastTimestamp = (await this.#head()).timestamp;
  }

  async #head(): Promise<Head> {
    const block = (await this.#edr.request({
      method: 'eth_getBlockByNumber',
      params: ['latest', false],
    })) as { number: string; hash: string; timestamp: string };
    return {
      number: Number(BigInt(block.number)),
      hash: block.hash,
      timestamp: Number(BigInt(block.timestamp)),
    };
  }

  /**
   * Replays journal entries on the (fresh, or loaded from a snapshot) EVM; `firstIndex` is the journal index of the
   * first (the entries a snapshot covers). Entries must all succeed, or the chain has diverged.
   */
  async replay(entries: JournalEntry[], firstIndex = 0): Promise<void> {
    this.#replayTargets = new Set(entries.flatMap((entry) => (entry.k === 'revert' ? [entry.to] : [])));
    for (const [offset, entry] of entries.entries()) {
      const index = firstIndex + offset;
      try {
        await this.#apply(entry, index);
      } catch (error) {
        throw new Error(
          `Chain journal replay failed at entry ${index} (${entry.k}): ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    }
    // Ids of `evm_snapshot` do not outlive the process that handed them out.
    this.#replayTargets.clear();
    this.#replaySnapshots.clear();
  }

  /** Starts journaling new requests (after replay). */
  attachJournal(journal: Journal): void {
    this.#journal = journal;
  }

  get journalLength(): number {
    return this.#journal?.count ?? 0;
  }

  /**
   * Runs `fn` with no state-changing request in flight and none starting until it ends: what it reads of the
   * chain is exactly what the journal holds (a snapshot is taken this way).
   */
  whileIdle<T>(fn: () => Promise<T>): Promise<T> {
    return this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      return fn();
    });
  }

  /**
   * What the engine's state dump lacks (call while idle, with the state dump): the transactions in the pool, which
   * must all be ones submitted through here, and node settings.
   */
  async captureExtras(): Promise<NodeExtras> {
    const content = (await this.#edr.request({ method: 'txpool_content' })) as Record<
      string,
      Record<string, Record<string, { hash: string }>>
    >;
    const inPool = new Set<string>();
    for (const bySender of Object.values(content)) {
      for (const byNonce of Object.values(bySender)) {
        for (const tx of Object.values(byNonce)) inPool.add(tx.hash.toLowerCase());
      }
    }
    const pool = [...this.#submitted]
      .filter(([hash]) => inPool.has(hash))
      .map(([hash, request]) => ({ hash, ...request }));
    if (pool.length !== inPool.size) {
      throw new Error('the pool holds a transaction that was not submitted through the journal');
    }
    this.#submitted = new Map(pool.map(({ hash, m, p }) => [hash, { m, p }]));
    return { pool, impersonated: [...this.#impersonated], nextBaseFee: this.#nextBaseFee };
  }

  /** Puts back what a snapshot's state lacked (after the state is loaded, before the journal after it is replayed). */
  async restoreExtras(extras: NodeExtras): Promise<void> {
    for (const address of extras.impersonated) await this.#run('hardhat_impersonateAccount', [address]);
    if (extras.nextBaseFee !== null)
      await this.#run('hardhat_setNextBlockBaseFeePerGas', [extras.nextBaseFee]);
    for (const { m, p } of extras.pool) await this.#run(m, p);
    const status = (await this.#edr.request({ method: 'txpool_status' })) as {
      pending: string;
      queued: string;
    };
    if (Number(status.pending) + Number(status.queued) !== extras.pool.length) {
      throw new Error(`${extras.pool.length} transactions put back in the pool, it holds others`);
    }
  }

  /** Runs a request on the engine and keeps what a snapshot of its state would lack. */
  async #run(method: string, params: unknown): Promise<unknown> {
    const result = await this.#edr.request({ method, params });
    const first = Array.isArray(params) ? params[0] : undefined;
    if (SUBMIT_METHODS.has(method) && typeof result === 'string') {
      this.#submitted.set(result.toLowerCase(), { m: method, p: params });
    } else if (method === 'hardhat_dropTransaction' && typeof first === 'string') {
      this.#submitted.delete(first.toLowerCase());
    } else if (method === 'anvil_dropAllTransactions') {
      this.#submitted.clear();
    } else if (method === 'hardhat_impersonateAccount' && typeof first === 'string') {
      this.#impersonated.add(first.toLowerCase());
    } else if (method === 'hardhat_stopImpersonatingAccount' && typeof first === 'string') {
      this.#impersonated.delete(first.toLowerCase());
    } else if (method === 'hardhat_setNextBlockBaseFeePerGas') {
      this.#nextBaseFee = first ?? null;
    }
    return result;
  }

  async #apply(entry: JournalEntry, index: number): Promise<void> {
    switch (entry.k) {
      case 'rpc':
        await this.#run(entry.m, entry.p);
        return;
      case 'tx':
        await this.#run(entry.m, entry.p);
        await this.#mineAt(entry.ts);
        return;
      case 'mine': {
        const interval = entry.interval ?? 1;
        for (let i = 0; i < (entry.n ?? 1); i++) await this.#mineAt(entry.ts + i * interval);
        return;
      }
      case 'clock':
        this.#clockOffset = entry.offset;
        return;
      case 'input':
        if (this.onInputEntry) await this.onInputEntry(entry);
        return;
      case 'snapshot':
        if (this.#replayTargets.has(index)) {
          this.#replaySnapshots.set(index, await this.#edr.request({ method: 'evm_snapshot' }));
        }
        return;
      case 'revert': {
        const anvilId = this.#replaySnapshots.get(entry.to);
        if (anvilId === undefined) throw new Error(`the snapshot of entry ${entry.to} was not replayed`);
        if ((await this.#edr.request({ method: 'evm_revert', params: [anvilId] })) !== true) {
          throw new Error(`anvil did not revert to the snapshot of entry ${entry.to}`);
        }
        // Anvil drops the snapshot reverted to and every later one.
        for (const key of this.#replaySnapshots.keys())
          if (key >= entry.to) this.#replaySnapshots.delete(key);
        await this.#rewound(entry);
        return;
      }
      case 'rollback':
        await this.#edr.request({ method: 'anvil_rollback', params: [entry.depth] });
        await this.#rewound(entry);
        return;
      case 'reorg':
        await this.#reorg(entry.p);
        await this.#rewound(entry);
        return;
    }
  }

  async #mineAt(ts: number): Promise<void> {
    await this.#edr.request({ method: 'evm_mine', params: [ts] });
    this.#lastTimestamp = ts;
    this.#nextBaseFee = null;
    if (this.#submitted.size > TRACKED_SUBMISSIONS) {
      // Almost always every submission is mined in the block after it: forget them once the pool is empty.
      const status = (await this.#edr.request({ method: 'txpool_status' })) as {
        pending: string;
        queued: string;
      };
      if (Number(status.pending) + Number(status.queued) === 0) this.#submitted.clear();
    }
    this.#wakeBlockWaiters();
  }

  #wakeBlockWaiters(): void {
    const waiters = [...this.#blockWaiters];
    this.#blockWaiters.clear();
    for (const wake of waiters) wake();
  }

  #nextBlockTimestamp(): number {
    if (this.#nextTimestamp !== null) {
      const ts = this.#nextTimestamp;
      this.#nextTimestamp = null;
      return ts;
    }
    return Math.max(this.#now() + this.#clockOffset, this.#lastTimestamp + 1);
  }

  /** As anvil: a block may share its parent's timestamp, not go before it. */
  #checkTimestamp(ts: number): void {
    if (ts < this.#lastTimestamp) {
      throw new RpcError(-32602, `${ts} is lower than previous block's timestamp`);
    }
  }

  /**
   * Anvil's reorg, its new blocks one second apart from the common block's timestamp (anvil would take the wall
   * clock's, which a replay cannot repeat).
   */
  async #reorg(params: unknown): Promise<void> {
    await this.#edr.request({ method: 'anvil_setBlockTimestampInterval', params: [1] });
    try {
      await this.#edr.request({ method: 'anvil_reorg', params });
    } finally {
      await this.#edr.request({ method: 'anvil_removeBlockTimestampInterval' });
    }
  }

  /**
   * After the chain went back to block `entry.block`: the clock as anvil set it back, and the next base fee anvil
   * holds (it keeps the one computed after the old head; a snapshot's load would compute one from the new head).
   */
  async #rewound(entry: RewindEntry): Promise<void> {
    this.#lastTimestamp = (await this.#head()).timestamp;
    this.#nextTimestamp = null;
    this.#clockOffset = entry.offset;
    const info = (await this.#edr.request({ method: 'anvil_nodeInfo' })) as {
      environment: { baseFee: number | string };
    };
    this.#nextBaseFee = toQuantity(Number(info.environment.baseFee));
    if (this.onRewind) await this.onRewind(entry);
    this.#wakeBlockWaiters();
  }

  /** The clock offset anvil leaves after going back to block `number`: its timestamp is "now". */
  async #offsetAfterRewind(number: number): Promise<number> {
    const block = (await this.#edr.request({
      method: 'eth_getBlockByNumber',
      params: [toQuantity(number), false],
    })) as { timestamp: string };
    return Number(BigInt(block.timestamp)) - this.#now();
  }

  async #record(entry: JournalEntry): Promise<void> {
    if (!this.#journal) return;
    try {
      await this.#journal.append(entry);
    } catch (error) {
      // The chain executed something the journal does not hold: refuse everything from now on.
      this.#broken = new Error(`Chain journal write failed: ${(error as Error).message}`, { cause: error });
      throw this.#broken;
    }
    this.onJournaled?.();
  }

  /** Runs `fn` after every earlier state-changing request has finished. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Journals clear values registered with the fhEVM mock (serialized with the chain's writes). */
  recordInput(handles: string[], values: string[]): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      await this.#record({ k: 'input', handles, values });
    });
  }

  async request(args: { method: string; params?: unknown }): Promise<unknown> {
    if (typeof args.method !== 'string')
      throw new RpcError(-32600, 'Invalid request: method must be a string');
    const method = canonicalMethod(args.method);
    if (REFUSED_METHODS.has(method) || (ANVIL_ONLY_METHODS.has(method) && !this.#rewrites)) {
      throw new RpcError(
        -32601,
        `Method ${args.method} is not supported by the embedded network${this.#rewrites ? ' (it keeps a journal)' : ' of a data directory made before anvil'}`,
      );
    }
    if (method === 'hardhat_getAutomine') return this.#automine;
    if (method === 'anvil_getIntervalMining') return this.#intervalSeconds;
    if (!isStateChanging(method)) {
      if (READ_METHODS.has(method) || READ_PREFIXES.some((prefix) => method.startsWith(prefix))) {
        return this.#edr.request(args);
      }
      throw new RpcError(-32601, `Method ${args.method} not found`);
    }
    // Anvil's reorg takes its options as an array or as an object: passed on as given.
    const params = method === 'anvil_reorg' ? args.params : asParams(args.params);
    const plain = SYNC_SUBMIT_METHODS.get(method);
    if (plain) {
      const hash = await this.#exclusive(() => this.#submit(plain, (params as unknown[]).slice(0, 1)));
      return this.#receiptWhenMined(hash);
    }
    return this.#exclusive(() => this.#write(method, params));
  }

  async #write(method: string, params: unknown): Promise<unknown> {
    if (this.#broken) throw this.#broken;
    if (method === 'anvil_reorg') return this.#writeReorg(params);
    const list = params as unknown[];
    if (SUBMIT_METHODS.has(method)) return this.#submit(method, list);
    if (STATE_METHODS.has(method)) {
      const result = await this.#run(method, list);
      await this.#record({ k: 'rpc', m: method, p: list });
      return result;
    }
    switch (method) {
      case 'evm_mine': {
        const { timestamp, blocks } = mineOptions(list);
        if (blocks === 0) return '0x0';
        if (blocks > MAX_BLOCKS_AT_ONCE)
          throw new RpcError(-32602, `evm_mine: at most ${MAX_BLOCKS_AT_ONCE} blocks`);
        let ts: number;
        if (timestamp === null) ts = this.#nextBlockTimestamp();
        else {
          this.#checkTimestamp(timestamp);
          ts = timestamp;
          this.#nextTimestamp = null;
        }
        for (let i = 0; i < blocks; i++) await this.#mineAt(ts + i);
        await this.#record(blocks === 1 ? { k: 'mine', ts } : { k: 'mine', ts, n: blocks, interval: 1 });
        if (timestamp !== null) {
          // Later blocks follow the time given, as anvil's do.
          this.#clockOffset = ts - this.#now();
          await this.#record({ k: 'clock', offset: this.#clockOffset });
        }
        return '0x0';
      }
      case 'hardhat_mine': {
        const n = list[0] === undefined || list[0] === null ? 1 : toNumber(list[0], 'block count');
        const interval = list[1] === undefined || list[1] === null ? 1 : toNumber(list[1], 'interval');
        if (n > MAX_BLOCKS_AT_ONCE || interval < 1)
          throw new RpcError(-32602, `hardhat_mine: at most ${MAX_BLOCKS_AT_ONCE} blocks`);
        if (n === 0) return null;
        const ts = this.#nextBlockTimestamp();
        for (let i = 0; i < n; i++) await this.#mineAt(ts + i * interval);
        await this.#record({ k: 'mine', ts, n, interval });
        return null;
      }
      case 'evm_increaseTime': {
        const seconds = toNumber(list[0], 'seconds');
        this.#clockOffset += seconds;
        await this.#record({ k: 'clock', offset: this.#clockOffset });
        return this.#clockOffset;
      }
      case 'evm_setNextBlockTimestamp': {
        const ts = toNumber(list[0], 'timestamp');
        this.#checkTimestamp(ts);
        this.#nextTimestamp = ts;
        // Later blocks keep following the new time, as anvil's do.
        this.#clockOffset = ts - this.#now();
        await this.#record({ k: 'clock', offset: this.#clockOffset });
        return null;
      }
      case 'evm_setAutomine':
        this.#setAutomine(toBoolean(list[0], 'enabled'));
        return null;
      case 'evm_setIntervalMining':
        this.#setIntervalMining(toNumber(list[0], 'seconds'));
        return null;
      case 'evm_snapshot': {
        const anvilId = await this.#edr.request({ method: 'evm_snapshot' });
        const entry = this.journalLength;
        await this.#record({ k: 'snapshot' });
        const id = this.#nextSnapshotId++;
        this.#stateSnapshots.set(id, { anvilId, entry, blockHash: (await this.#head()).hash });
        return toQuantity(id);
      }
      case 'evm_revert':
        return this.#writeRevert(toNumber(list[0], 'snapshot id'));
      case 'anvil_rollback':
        // As anvil: one parameter, the depth or null for 1.
        if (list.length !== 1)
          throw new RpcError(-32602, `expected params sequence with length 1 but got ${list.length}`);
        return this.#writeRollback(
          list[0] === undefined || list[0] === null ? 1 : toNumber(list[0], 'depth'),
        );
      default:
        throw new RpcError(-32601, `Method ${method} not found`);
    }
  }

  async #writeRevert(id: number): Promise<boolean> {
    const snapshot = this.#stateSnapshots.get(id);
    // As anvil: an unknown id (or one handed out before a restart) reverts nothing.
    if (!snapshot) return false;
    // Anvil would point its head at a block a rollback or reorg removed, and fail half-way: refused before.
    const snapshotBlock = await this.#edr.request({
      method: 'eth_getBlockByHash',
      params: [snapshot.blockHash, false],
    });
    if (snapshotBlock === null || snapshotBlock === undefined) {
      throw new RpcError(
        -32602,
        `evm_revert: the block of snapshot ${toQuantity(id)} is no longer on the chain`,
      );
    }
    if ((await this.#edr.request({ method: 'evm_revert', params: [snapshot.anvilId] })) !== true)
      return false;
    for (const key of this.#stateSnapshots.keys()) if (key >= id) this.#stateSnapshots.delete(key);
    const block = (await this.#head()).number;
    const entry: RewindEntry = {
      k: 'revert',
      to: snapshot.entry,
      block,
      offset: await this.#offsetAfterRewind(block),
    };
    await this.#record(entry);
    await this.#rewound(entry);
    return true;
  }

  async #writeRollback(depth: number): Promise<null> {
    await this.#edr.request({ method: 'anvil_rollback', params: [depth] });
    const block = (await this.#head()).number;
    const entry: RewindEntry = { k: 'rollback', depth, block, offset: await this.#offsetAfterRewind(block) };
    await this.#record(entry);
    await this.#rewound(entry);
    return null;
  }

  async #writeReorg(params: unknown): Promise<null> {
    const block = (await this.#head()).number - reorgDepth(params);
    await this.#reorg(params);
    const entry: RewindEntry = { k: 'reorg', p: params, block, offset: await this.#offsetAfterRewind(block) };
    await this.#record(entry);
    await this.#rewound(entry);
    return null;
  }

  /** A transaction submitted: then one block mined (a `tx` entry) with automine, else left in the pool. */
  async #submit(method: string, params: unknown[]): Promise<unknown> {
    if (this.#broken) throw this.#broken;
    const result = await this.#run(method, params);
    if (!this.#automine) {
      await this.#record({ k: 'rpc', m: method, p: params });
      return result;
    }
    const ts = this.#nextBlockTimestamp();
    await this.#mineAt(ts);
    await this.#record({ k: 'tx', m: method, p: params, ts });
    return result;
  }

  /** EIP-7966's answer: the receipt, once mined (at once with automine; else within anvil's 30 s). */
  async #receiptWhenMined(hash: unknown): Promise<unknown> {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    for (;;) {
      const receipt = await this.#edr.request({ method: 'eth_getTransactionReceipt', params: [hash] });
      if (receipt !== null && receipt !== undefined) return receipt;
      const left = deadline - Date.now();
      if (left <= 0) throw new RpcError(-32603, 'Transaction confirmation timeout');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#blockWaiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** `evm_setAutomine`, as anvil: on replaces interval mining; off leaves interval mining on. */
  #setAutomine(enabled: boolean): void {
    if (enabled === this.#automine) return;
    if (enabled) {
      this.#stopInterval();
      this.#automine = true;
    } else this.#automine = false;
  }

  /** `evm_setIntervalMining`: a block every `seconds` (automine off); 0 stops it (and leaves automine off). */
  #setIntervalMining(seconds: number): void {
    this.#stopInterval();
    this.#automine = false;
    if (seconds === 0) return;
    this.#intervalSeconds = seconds;
    const generation = this.#intervalGeneration;
    let due = Date.now() + seconds * 1000;
    const tick = () => {
      this.#intervalTimer = null;
      void this.#exclusive(async () => {
        if (generation !== this.#intervalGeneration || this.#broken) return;
        const ts = this.#nextBlockTimestamp();
        await this.#mineAt(ts);
        await this.#record({ k: 'mine', ts });
      })
        .catch(() => {
          // The engine is gone or the journal broke: later requests say so; no more blocks.
          if (generation === this.#intervalGeneration) this.#stopInterval();
        })
        .then(() => {
          if (generation !== this.#intervalGeneration) return;
          // Anvil's blocks keep their schedule; one that fell behind is mined at once.
          due = Math.max(due + seconds * 1000, Date.now());
          this.#intervalTimer = setTimeout(tick, due - Date.now());
          this.#intervalTimer.unref();
        });
    };
    this.#intervalTimer = setTimeout(tick, due - Date.now());
    this.#intervalTimer.unref();
  }

  #stopInterval(): void {
    this.#intervalGeneration++;
    if (this.#intervalTimer) clearTimeout(this.#intervalTimer);
    this.#intervalTimer = null;
    this.#intervalSeconds = null;
  }

  /** Starts with a block every `seconds` (`sealpay devnet --block-time`), as `anvil --block-time`. */
  startIntervalMining(seconds: number): Promise<void> {
    return this.#exclusive(async () => this.#setIntervalMining(seconds));
  }

  /** Stops interval mining (before a stop: no block after the last snapshot). */
  stopMining(): void {
    this.#stopInterval();
  }

  /** Waits for every pending state-changing request. */
  async drain(): Promise<void> {
    await this.#tail;
  }
}
