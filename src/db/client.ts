import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { getTableColumns, param, type SQL, sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgColumn, PgDatabase, PgQueryResultHKT, PgTable } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { acquirePidLock } from '../lib/pid-lock.ts';
import { PgliteThread } from './pglite-thread.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle: the same query surface as Db. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

/** A dedicated connection LISTENing on one channel. */
export interface ChannelListener {
  /** Settles when the connection is lost (never after `close`). */
  readonly lost: Promise<Error>;
  close(): Promise<void>;
}

export interface Database {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * PostgreSQL only (the embedded database has one process): NOTIFY and LISTEN, so processes sharing the database
   * can tell each other something happened.
   */
  /**
   * Runs `work` while holding the lock named `key` in every process that shares the database: on PostgreSQL an
   * advisory lock on a connection of its own (released by PostgreSQL if the process dies), which `work` gets as
   * its `db`; on the embedded database, which has one process, an in-process lock over the one connection.
   */
  withLock<T>(key: string, work: (db: Db) => Promise<T>): Promise<T>;
  /**
   * The embedded database only: hears, before the writer hears its commit, which account's transactions a commit
   * changed (migration 0008). Null on PostgreSQL, where other processes write and a notification comes after.
   */
  readonly transactionChanges: { subscribe(listener: (userId: string) => void): () => void } | null;
  readonly notifications: {
    notify(channel: string, payload: string): Promise<void>;
    listen(channel: string, onNotification: (payload: string) => void): Promise<ChannelListener>;
  } | null;
}

/** Runs raw SQL and returns its rows, on PGlite and PostgreSQL alike. */
export async function rows<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  // Both drivers answer `{rows}` (node-postgres' QueryResult, PGlite's Results); `Db` is typed over either.
  const result = (await db.execute(query)) as { rows: T[] };
  return result.rows;
}

/**
 * Runs raw SQL that returns whole rows of `table` (`returning *`) and maps them as Drizzle's own queries do: each
 * column by its property name, through the column's decoder (timestamps to Dates, int8 to bigints).
 */
export async function tableRows<T extends PgTable>(
  db: DbOrTx,
  table: T,
  query: SQL,
): Promise<T['$inferSelect'][]> {
  const columns = Object.entries(getTableColumns(table));
  const raw = await rows<Record<string, unknown>>(db, query);
  return raw.map((row) => {
    const mapped: Record<string, unknown> = {};
    for (const [property, column] of columns) {
      const value = row[column.name];
      mapped[property] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return mapped as T['$inferSelect'];
  });
}

/**
 * `insert into table (…) select …` of one row's values, each bound as the column's own parameter (its encoder, a
 * cast to its type): a row inserted only when `condition` holds, in one statement.
 */
export function insertValuesWhere<T extends PgTable>(
  table: T,
  values: Partial<T['$inferInsert']>,
  condition: SQL,
): SQL {
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  const given = Object.entries(values).filter(
    ([property, value]) => value !== undefined && columns[property],
  );
  const column = (property: string) => columns[property] as PgColumn;
  return sql`insert into ${table} (${sql.join(
    given.map(([property]) => sql.identifier(column(property).name)),
    sql`, `,
  )}) select ${sql.join(
    given.map(
      ([property, value]) =>
        sql`${param(value, column(property))}::${sql.raw(column(property).getSQLType())}`,
    ),
    sql`, `,
  )} where ${condition} returning *`;
}

/** The SQL migrations Drizzle applies, in order (`drizzle-kit generate` writes them). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('./migrations', import.meta.url));

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite is used. */
  databaseUrl: string | null;
  /** Where PGlite keeps its files; null keeps it in memory (tests). */
  dataDir: string | null;
  /**
   * In-memory PGlite only: a dumped data directory (`dumpDataDir`, uncompressed) to start from instead of a new
   * cluster. The test suite migrates one image per run and starts each file's database from it.
   */
  image?: string | null;
  poolSize?: number;
  /** Where the pool reports a dropped idle connection (the pool replaces it; the process goes on). */
  onPoolError?: (error: Error) => void;
}

/** One holder per key at a time inside this process: later callers queue behind earlier ones. */
function inProcessLocks(): <T>(key: string, work: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async (key, work) => {
    const previous = tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => {}).then(work);
    tails.set(key, current);
    try {
      return await current;
    } finally {
      if (tails.get(key) === current) tails.delete(key);
    }
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const queue = inProcessLocks();
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // A dropped idle connection must not take the process down; the pool replaces it, and the log says so.
    pool.on('error', (error) => options.onPoolError?.(error));
    const db: Db = drizzlePg(pool, { schema });
    return {
      db,
      kind: 'postgres',
      migrate: () => migratePg(drizzlePg(pool), { migrationsFolder: MIGRATIONS_FOLDER }),
      ping: async () => {
        await pool.query('select 1');
      },
      close: () => pool.end(),
      transactionChanges: null,
      // Queued in the process first, so waiting callers do not each hold a pooled connection.
      withLock: (key, work) =>
        queue(key, async () => {
          const client = await pool.connect();
          let broken: Error | undefined;
          try {
            await client.query('select pg_advisory_lock(hashtextextended($1, 0))', [key]);
            try {
              return await work(drizzlePg(client, { schema }));
            } finally {
              await client
                .query('select pg_advisory_unlock(hashtextextended($1, 0))', [key])
                .catch((error: Error) => {
                  broken = error;
                });
            }
          } finally {
            // A connection that could not unlock is closed, which releases its lock.
            client.release(broken);
          }
        }),
      notifications: {
        async notify(channel, payload) {
          await pool.query('select pg_notify($1, $2)', [channel, payload]);
        },
        async listen(channel, onNotification) {
          // Its own connection, outside the pool: a LISTEN lasts as long as the connection.
          const client = new pg.Client({ connectionString: options.databaseUrl as string });
          let closing = false;
          const lost = new Promise<Error>((resolve) => {
            client.on('error', (error) => {
              if (!closing) resolve(error);
            });
            client.on('end', () => {
              if (!closing) resolve(new Error('the LISTEN connection ended'));
            });
          });
          client.on('notification', (message) => {
            if (message.channel === channel) onNotification(message.payload ?? '');
          });
          try {
            await client.connect();
            await client.query(`listen ${client.escapeIdentifier(channel)}`);
          } catch (error) {
            closing = true;
            await client.end().catch(() => {});
            throw error;
          }
          return {
            lost,
            async close() {
              closing = true;
              await client.end().catch(() => {});
            },
          };
        },
      },
    };
  }
  let client: PgliteThread;
  let release = () => {};
  if (options.dataDir) {
    const dir = join(options.dataDir, 'pgdata');
    mkdirSync(dir, { recursive: true });
    // PGlite is a database inside this process: a second process opening the same files would corrupt them or
    // see none of the first one's writes.
    release = acquirePidLock(
      join(options.dataDir, 'database.lock'),
      `The embedded database in ${options.dataDir}`,
    );
    try {
      client = await PgliteThread.open(dir);
    } catch (error) {
      release();
      throw error;
    }
  } else {
    client = await PgliteThread.open(null, options.image ?? null);
  }
  // Drizzle's pglite driver calls only `query` and `transaction`, which the thread's client has.
  const driverClient = client as unknown as PGlite;
  const db: Db = drizzlePglite(driverClient, { schema });
  return {
    db,
    kind: 'pglite',
    migrate: () => migratePglite(drizzlePglite(driverClient), { migrationsFolder: MIGRATIONS_FOLDER }),
    ping: async () => {
      await client.query('select 1');
    },
    close: async () => {
      await client.close();
      release();
    },
    withLock: (key, work) => queue(key, () => work(db)),
    transactionChanges: { subscribe: (listener) => client.onTransactionChange(listener) },
    notifications: null,
  };
}
