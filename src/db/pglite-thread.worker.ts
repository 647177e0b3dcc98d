/**
 * The embedded database's thread (see pglite-thread.ts): owns the PGlite instance and answers the main thread's
 * requests, one message each. Transactions stay open across messages: `begin` runs PGlite's own `transaction`,
 * whose callback waits for the main thread's `end`; PGlite holds its lock meanwhile, so statements outside the
 * transaction queue behind it exactly as they would in process.
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type QueryOptions, type Transaction } from '@electric-sql/pglite';
import {
  type ThreadMessage,
  type ThreadReply,
  type ThreadRequest,
  TRANSACTION_CHANGES,
} from './pglite-thread.ts';

const port = parentPort;
if (!port) throw new Error('pglite-thread.worker.ts runs only as a worker thread');
const { dataDir, image } = workerData as { dataDir: string | null; image: string | null };

/**
 * The data directory is private (directories 0700, files 0600: src/lib/private-dir.ts), but PGlite's file system
 * (Emscripten's NODEFS) chmods every file it creates to the mode the database asked for, past the process's umask:
 * a new cluster's files came out 0666 (its first write-ahead log segment among them) and some later ones 0644. In
 * this thread, which runs PGlite alone, a chmod never grants group or other bits.
 */
function keepChmodPrivate(): void {
  const privateMode = (mode: fs.Mode) => (typeof mode === 'string' ? Number.parseInt(mode, 8) : mode) & 0o700;
  const { chmodSync, fchmodSync } = fs;
  fs.chmodSync = (path, mode) => chmodSync(path, privateMode(mode));
  fs.fchmodSync = (fd, mode) => fchmodSync(fd, privateMode(mode));
}
if (dataDir) keepChmodPrivate();

interface OpenTransaction {
  tx: Transaction;
  end: (commit: boolean) => void;
  done: Promise<void>;
}

/** Thrown inside a transaction's callback to have PGlite roll it back. */
const ROLLBACK = Symbol('rollback');

const pg = await PGlite.create({
  ...(dataDir ? { dataDir } : {}),
  ...(image ? { loadDataDir: new Blob([fs.readFileSync(image)]) } : {}),
});
// The triggers of migration 0008 tell this session which accounts' transactions each commit changed; PGlite hands a
// notification to its listener (a microtask) before the statement that caused it answers, so the main thread hears
// of a change before the writer hears its commit.
await pg.query(`set sealpay.notify_changes = 'on'`);
await pg.listen(TRANSACTION_CHANGES, (userId) => {
  port.postMessage({ kind: 'transaction-changed', userId } satisfies ThreadMessage);
});
/** Open transactions by the id the main thread gave them; a statement of one waits until its BEGIN is through. */
const transactions = new Map<number, Promise<OpenTransaction>>();

function keepText(value: string): string {
  return value;
}

function queryOptions(request: Extract<ThreadRequest, { kind: 'query' }>): QueryOptions {
  const options: QueryOptions = { rowMode: request.rowMode };
  if (request.textTypes.length > 0) {
    // The types the caller keeps as the database's text (Drizzle keeps timestamps and dates so).
    options.parsers = Object.fromEntries(request.textTypes.map((oid) => [oid, keepText]));
  }
  return options;
}

/**
 * Opens transaction `id`: PGlite's own `transaction`, whose callback waits for the main thread's `end`. Registered
 * at once, so the transaction's next statements, which may arrive before PGlite let it begin, wait for it.
 */
function begin(id: number): Promise<OpenTransaction> {
  const opened = new Promise<OpenTransaction>((resolve, reject) => {
    let end: (commit: boolean) => void = () => {};
    const decided = new Promise<boolean>((settle) => {
      end = settle;
    });
    const done = pg
      .transaction(async (tx) => {
        resolve({ tx, end, done });
        if (!(await decided)) throw ROLLBACK;
      })
      .then(
        () => undefined,
        (error: unknown) => {
          if (error !== ROLLBACK) throw error;
        },
      )
      .finally(() => transactions.delete(id));
    // BEGIN itself failed: the callback never ran.
    done.catch(reject);
  });
  transactions.set(id, opened);
  return opened;
}

async function transactionOf(id: number): Promise<OpenTransaction> {
  const open = transactions.get(id);
  if (!open) throw new Error(`transaction ${id} is not open`);
  return open;
}

/** An error as plain fields: the driver's (SQLSTATE `code`, `constraint`…), never the statement's parameters. */
function errorFields(error: unknown): ThreadReply & { ok: false } {
  if (!(error instanceof Error)) return { id: 0, ok: false, error: { message: String(error) } };
  const { params: _params, queryOptions: _options, ...fields } = error as Error & Record<string, unknown>;
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || typeof value === 'function') continue;
    plain[key] = typeof value === 'object' && value !== null ? String(value) : value;
  }
  return { id: 0, ok: false, error: { ...plain, name: error.name, message: error.message } };
}

async function answer(request: ThreadRequest): Promise<unknown> {
  switch (request.kind) {
    case 'query': {
      const { transaction } = request;
      if (!transaction) return pg.query(request.sql, request.params, queryOptions(request));
      const { tx } = await (transaction.begin ? begin(transaction.id) : transactionOf(transaction.id));
      return tx.query(request.sql, request.params, queryOptions(request));
    }
    case 'end': {
      const open = await transactionOf(request.transaction);
      open.end(request.commit);
      await open.done;
      return null;
    }
    case 'close':
      await pg.close();
      return null;
  }
}

port.on('message', (request: ThreadRequest) => {
  answer(request).then(
    (result) => port.postMessage({ id: request.id, ok: true, result } satisfies ThreadReply),
    (error: unknown) => port.postMessage({ ...errorFields(error), id: request.id } satisfies ThreadReply),
  );
});
port.postMessage({ id: 0, ok: true, result: 'ready' } satisfies ThreadMessage);
