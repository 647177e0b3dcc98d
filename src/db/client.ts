import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { acquirePidLock } from '../lib/pid-lock.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle: the same query surface as Db. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export interface Database {
  readonly db: Db;
  readonly kind: 'pglite' | 'postgres';
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Runs raw SQL and returns its rows, on PGlite and PostgreSQL alike. */
export async function rows<T>(db: DbOrTx, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite is used. */
  databaseUrl: string | null;
  /** Where PGlite keeps its files; null keeps it in memory (tests). */
  dataDir: string | null;
  poolSize?: number;
  /** Where the pool reports a dropped idle connection (the pool replaces it; the process goes on). */
  onPoolError?: (error: Error) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // A dropped idle connection must not take the process down; the pool replaces it, and the log says so.
    pool.on('error', (error) => options.onPoolError?.(error));
    const db = drizzlePg(pool, { schema }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      migrate: () => migratePg(drizzlePg(pool), { migrationsFolder }),
      ping: async () => {
        await pool.query('select 1');
      },
      close: () => pool.end(),
    };
  }
  let client: PGlite;
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
      client = await PGlite.create(dir);
    } catch (error) {
      release();
      throw error;
    }
  } else {
    client = await PGlite.create();
  }
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder }),
    ping: async () => {
      await client.query('select 1');
    },
    close: async () => {
      await client.close();
      release();
    },
  };
}
