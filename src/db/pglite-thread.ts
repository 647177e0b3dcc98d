/**
 * The embedded database on a thread of its own. PGlite is PostgreSQL compiled to WebAssembly: in the process's
 * main thread every statement (and the parsing of its answer) ran between the HTTP requests, the worker and the
 * chain's signing, and was ~45 % of that thread under load (`npm run bench -- transfers`). Here it runs in a
 * worker thread (pglite-thread.worker.ts) and the main thread only sends statements and receives rows, so on a
 * machine with two cores the database and the rest run side by side.
 *
 * `PgliteThread` has the part of PGlite's interface Drizzle's `pglite` driver uses (`query`, `transaction`), so
 * everything above it is unchanged. Same process, same files: the data directory's lock, a kill -9 and a restart
 * behave as with PGlite in the main thread.
 */
import { Worker } from 'node:worker_threads';
import type { Results } from '@electric-sql/pglite';

/** What the main thread asks; `id` pairs a reply with its request. */
export type ThreadRequest =
  | {
      id: number;
      kind: 'query';
      sql: string;
      params: unknown[];
      rowMode: 'array' | 'object';
      /** Type OIDs to keep as text instead of parsing (Drizzle's timestamps and dates). */
      textTypes: number[];
      /** Run inside this transaction; `begin`: the transaction's first statement, which opens it. */
      transaction?: { id: number; begin: boolean };
    }
  | { id: number; kind: 'end'; transaction: number; commit: boolean }
  | { id: number; kind: 'close' };

export type ThreadReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: Record<string, unknown> & { message: string; name?: string } };

/** The channel of migration 0008's notifications: a commit changed this account's transactions. */
export const TRANSACTION_CHANGES = 'sealpay_transaction_changes';

/** What the thread sends: replies, and the accounts whose transactions a commit changed. */
export type ThreadMessage = ThreadReply | { kind: 'transaction-changed'; userId: string };

interface QueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, (value: string, typeId: number) => unknown>;
}

/** The database's error as the driver raised it in the thread: its SQLSTATE `code`, `constraint`, `detail`… */
class DatabaseThreadError extends Error {
  constructor(fields: Record<string, unknown> & { message: string; name?: string }) {
    super(fields.message);
    const { message: _message, name, ...rest } = fields;
    Object.assign(this, rest);
    this.name = name ?? 'DatabaseError';
  }
}

const SAMPLE = '2000-01-01 00:00:00';

/**
 * The types a caller's parsers keep as text. Functions cannot cross to the thread, so only parsers that return
 * their input are accepted (Drizzle's are all such): any other is refused rather than silently dropped.
 */
function textTypes(options: QueryOptions | undefined): number[] {
  const parsers = options?.parsers;
  if (!parsers) return [];
  return Object.entries(parsers).map(([oid, parse]) => {
    if (parse(SAMPLE, Number(oid)) !== SAMPLE) {
      throw new Error(`the embedded database thread takes only parsers that keep the text (type ${oid})`);
    }
    return Number(oid);
  });
}

export class PgliteThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 1;
  #nextTransaction = 1;
  #stopped: Error | null = null;
  readonly #changeListeners = new Set<(userId: string) => void>();

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on('message', (message: ThreadMessage) => {
      if ('kind' in message) {
        for (const listener of this.#changeListeners) listener(message.userId);
      } else {
        this.#settle(message);
      }
    });
    worker.on('error', (error) => this.#stop(error));
    worker.on('exit', (code) => this.#stop(new Error(`the embedded database thread exited (code ${code})`)));
    // Nothing pending: the thread alone does not keep the process alive (a CLI command ends when it is done).
    worker.unref();
  }

  /**
   * Opens PGlite in `dataDir` (null: in memory) on a new thread; resolves once it is ready. `image`: a data
   * directory dumped by PGlite's `dumpDataDir` (an uncompressed tar) to start from instead of a new cluster: a
   * new cluster runs initdb, seconds of WebAssembly, where loading a migrated image takes under one.
   */
  static open(dataDir: string | null, image: string | null = null): Promise<PgliteThread> {
    const worker = new Worker(new URL('./pglite-thread.worker.ts', import.meta.url), {
      workerData: { dataDir, image },
    });
    return new Promise((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      const exited = (code: number) =>
        reject(new Error(`the embedded database thread exited (code ${code})`));
      worker.once('error', failed);
      worker.once('exit', exited);
      worker.once('message', (reply: ThreadMessage) => {
        worker.off('error', failed);
        worker.off('exit', exited);
        if ('kind' in reply) reject(new Error('the embedded database thread spoke before it was ready'));
        else if (reply.ok) resolve(new PgliteThread(worker));
        else reject(new DatabaseThreadError(reply.error));
      });
    });
  }

  /**
   * Calls `listener` with the account of every commit that changed its transactions, before the statement that
   * committed answers (the thread sends both in that order). Returns the unsubscribe.
   */
  onTransactionChange(listener: (userId: string) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  query<T>(sql: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    return this.#queryIn(undefined, sql, params, options);
  }

  /**
   * Runs `work` in one database transaction: committed when it resolves, rolled back when it throws. Its first
   * statement opens it in the thread (one message instead of a BEGIN of its own): the database is held for the
   * transaction from then until its end, and a round trip less is a shorter hold.
   */
  async transaction<T>(work: (tx: { query: PgliteThread['query'] }) => Promise<T>): Promise<T> {
    const id = this.#nextTransaction++;
    let begun = false;
    const query = (sql: string, params: unknown[] = [], options?: QueryOptions) => {
      const begin = !begun;
      begun = true;
      return this.#queryIn({ id, begin }, sql, params, options);
    };
    let result: T;
    try {
      result = await work({ query: query as PgliteThread['query'] });
    } catch (error) {
      if (begun) await this.#request({ kind: 'end', transaction: id, commit: false }).catch(() => {});
      throw error;
    }
    if (begun) await this.#request({ kind: 'end', transaction: id, commit: true });
    return result;
  }

  async close(): Promise<void> {
    if (this.#stopped) return;
    await this.#request({ kind: 'close' });
    this.#stopped = new Error('the embedded database is closed');
    await this.#worker.terminate();
  }

  #queryIn<T>(
    transaction: { id: number; begin: boolean } | undefined,
    sql: string,
    params: unknown[],
    options: QueryOptions | undefined,
  ): Promise<Results<T>> {
    return this.#request({
      kind: 'query',
      sql,
      params,
      rowMode: options?.rowMode ?? 'object',
      textTypes: textTypes(options),
      ...(transaction === undefined ? {} : { transaction }),
    }) as Promise<Results<T>>;
  }

  #request(request: DistributiveOmit<ThreadRequest, 'id'>): Promise<unknown> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage({ ...request, id });
    });
  }

  #settle(reply: ThreadReply): void {
    const waiting = this.#pending.get(reply.id);
    if (!waiting) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(new DatabaseThreadError(reply.error));
  }

  /** The thread is gone (it crashed, or was closed): whatever waits for it fails, and so does what comes later. */
  #stop(reason: Error): void {
    this.#stopped ??= reason;
    for (const waiting of this.#pending.values()) waiting.reject(reason);
    this.#pending.clear();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
