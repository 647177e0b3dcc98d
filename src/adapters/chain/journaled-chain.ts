/**
 * An EIP-1193 front of the embedded EVM that journals every state-changing request.
 *
 * - Reads pass straight through.
 * - State-changing requests are serialized (one at a time, in arrival order), executed, appended to the journal
 *   and fsync'ed before they return, so the journal is always the exact sequence the chain executed.
 * - Every block is mined by us with an explicit timestamp (`evm_mine(ts)`): a submitted transaction is followed by
 *   one block, and the journal records that timestamp, so a replay reproduces identical blocks and hashes.
 * - Methods that would rewrite history (`evm_snapshot`/`evm_revert`, `hardhat_reset`, automine switches) are refused.
 * - What an anvil state dump does not hold, and a replay of the journal would rebuild, is kept aside for snapshots
 *   (`NodeExtras`): transactions still waiting in the pool (a nonce gap), impersonated accounts, a next block's base
 *   fee set and not yet used.
 */
import { type Eip1193, RpcError } from './evm.ts';
import type { Journal, JournalEntry } from './journal.ts';

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
  'evm_setBlockGasLimit',
]);

const REFUSED_METHODS = new Set([
  // Anvil would put the transaction in its pool without it passing here: the journal would not hold it.
  'eth_sendUnsignedTransaction',
  'evm_snapshot',
  'evm_revert',
  'hardhat_reset',
  'evm_setAutomine',
  'evm_setIntervalMining',
  'hardhat_setLoggingEnabled',
  'hardhat_addCompilationResult',
]);

const READ_PREFIXES = ['eth_', 'net_', 'web3_', 'debug_', 'txpool_'];
const READ_METHODS = new Set(['hardhat_getAutomine', 'hardhat_metadata']);

/** True for requests that the journaled chain executes under its write lock (and journals). */
export function isStateChanging(method: string): boolean {
  return (
    SUBMIT_METHODS.has(method) ||
    SYNC_SUBMIT_METHODS.has(method) ||
    STATE_METHODS.has(method) ||
    method === 'evm_mine' ||
    method === 'hardhat_mine' ||
    method === 'evm_increaseTime' ||
    method === 'evm_setNextBlockTimestamp'
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

function asParams(params: unknown): unknown[] {
  if (params === undefined || params === null) return [];
  if (Array.isArray(params)) return params;
  throw new RpcError(-32602, 'Invalid params: expected an array');
}

function toNumber(value: unknown, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) return Number(BigInt(value));
  if (typeof value === 'bigint') return Number(value);
  throw new RpcError(-32602, `Invalid params: ${what} must be a quantity`);
}

export class JournaledChain implements Eip1193 {
  readonly #edr: Eip1193;
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
  /** Transactions submitted that may still be in the pool, in submission order (hash → request). */
  #submitted = new Map<string, { m: string; p: unknown }>();
  #impersonated = new Set<string>();
  #nextBaseFee: unknown = null;

  /** `clockOffset`: the offset a snapshot saved, when the chain was loaded from one. */
  constructor(edr: Eip1193, options: { now?: () => number; clockOffset?: number } = {}) {
    this.#edr = edr;
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.#clockOffset = options.clockOffset ?? 0;
  }

  /** Seconds added to wall time for new blocks (evm_increaseTime, evm_setNextBlockTimestamp). */
  get clockOffset(): number {
    return this.#clockOffset;
  }

  /** Reads the latest block's timestamp; call once before use. */
  async init(): Promise<void> {
    const block = (await this.#edr.request({
      method: 'eth_getBlockByNumber',
      params: ['latest', false],
    })) as {
      timestamp: string;
    };
    this.#lastTimestamp = Number(BigInt(block.timestamp));
  }

  /** Replays journal entries on the (fresh) EVM. Entries must all succeed, or the chain has diverged. */
  async replay(entries: JournalEntry[]): Promise<void> {
    for (const [index, entry] of entries.entries()) {
      try {
        await this.#apply(entry);
      } catch (error) {
        throw new Error(
          `Chain journal replay failed at entry ${index} (${entry.k}): ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    }
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
    } else if (method === 'hardhat_impersonateAccount' && typeof first === 'string') {
      this.#impersonated.add(first.toLowerCase());
    } else if (method === 'hardhat_stopImpersonatingAccount' && typeof first === 'string') {
      this.#impersonated.delete(first.toLowerCase());
    } else if (method === 'hardhat_setNextBlockBaseFeePerGas') {
      this.#nextBaseFee = first ?? null;
    }
    return result;
  }

  async #apply(entry: JournalEntry): Promise<void> {
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
  }

  #nextBlockTimestamp(): number {
    if (this.#nextTimestamp !== null) {
      const ts = this.#nextTimestamp;
      this.#nextTimestamp = null;
      return ts;
    }
    return Math.max(this.#now() + this.#clockOffset, this.#lastTimestamp + 1);
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
    const { method } = args;
    if (typeof method !== 'string') throw new RpcError(-32600, 'Invalid request: method must be a string');
    if (REFUSED_METHODS.has(method)) {
      throw new RpcError(
        -32601,
        `Method ${method} is not supported by the embedded network (it keeps a journal)`,
      );
    }
    if (!isStateChanging(method)) {
      if (READ_METHODS.has(method) || READ_PREFIXES.some((prefix) => method.startsWith(prefix))) {
        return this.#edr.request(args);
      }
      throw new RpcError(-32601, `Method ${method} not found`);
    }
    return this.#exclusive(() => this.#write(method, asParams(args.params)));
  }

  async #write(method: string, params: unknown[]): Promise<unknown> {
    if (this.#broken) throw this.#broken;
    if (SUBMIT_METHODS.has(method)) return this.#submit(method, params);
    const plain = SYNC_SUBMIT_METHODS.get(method);
    if (plain) {
      const hash = await this.#submit(plain, params.slice(0, 1));
      return this.#edr.request({ method: 'eth_getTransactionReceipt', params: [hash] });
    }
    if (STATE_METHODS.has(method)) {
      const result = await this.#run(method, params);
      await this.#record({ k: 'rpc', m: method, p: params });
      return result;
    }
    switch (method) {
      case 'evm_mine': {
        const requested = params[0];
        let ts: number;
        if (requested === undefined || requested === null) ts = this.#nextBlockTimestamp();
        else if (typeof requested === 'object')
          throw new RpcError(-32602, 'evm_mine options are not supported');
        else ts = toNumber(requested, 'timestamp');
        if (ts <= this.#lastTimestamp) {
          throw new RpcError(
            -32602,
            `Timestamp ${ts} is not greater than the latest block's ${this.#lastTimestamp}`,
          );
        }
        await this.#mineAt(ts);
        await this.#record({ k: 'mine', ts });
        return '0x0';
      }
      case 'hardhat_mine': {
        const n = params[0] === undefined ? 1 : toNumber(params[0], 'block count');
        const interval = params[1] === undefined ? 1 : toNumber(params[1], 'interval');
        if (n < 1 || n > 10_000 || interval < 1)
          throw new RpcError(-32602, 'hardhat_mine: 1 to 10000 blocks');
        const ts = this.#nextBlockTimestamp();
        for (let i = 0; i < n; i++) await this.#mineAt(ts + i * interval);
        await this.#record({ k: 'mine', ts, n, interval });
        return true;
      }
      case 'evm_increaseTime': {
        const seconds = toNumber(params[0], 'seconds');
        this.#clockOffset += seconds;
        await this.#record({ k: 'clock', offset: this.#clockOffset });
        return String(this.#clockOffset);
      }
      case 'evm_setNextBlockTimestamp': {
        const ts = toNumber(params[0], 'timestamp');
        if (ts <= this.#lastTimestamp) {
          throw new RpcError(
            -32602,
            `Timestamp ${ts} is not greater than the latest block's ${this.#lastTimestamp}`,
          );
        }
        this.#nextTimestamp = ts;
        // Later blocks keep following the new time, as Hardhat does.
        this.#clockOffset = ts - this.#now();
        await this.#record({ k: 'clock', offset: this.#clockOffset });
        return null;
      }
      default:
        throw new RpcError(-32601, `Method ${method} not found`);
    }
  }

  /** A transaction submitted, then one block mined: the journal's `tx` entry. */
  async #submit(method: string, params: unknown[]): Promise<unknown> {
    const result = await this.#run(method, params);
    const ts = this.#nextBlockTimestamp();
    await this.#mineAt(ts);
    await this.#record({ k: 'tx', m: method, p: params, ts });
    return result;
  }

  /** Waits for every pending state-changing request. */
  async drain(): Promise<void> {
    await this.#tail;
  }
}
