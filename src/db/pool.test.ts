import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../test/harness.ts';
import { loadConfig } from '../config.ts';
import { closeDeps, createDeps } from '../runtime.ts';

describe.skipIf(!process.env.DATABASE_URL)('the PostgreSQL pool', () => {
  it('logs a dropped idle connection, without the connection string, and goes on serving queries', async () => {
    const { database, url, drop } = await openTestDatabase();
    await database.close();
    const warnings: string[] = [];
    const logger = {
      info: () => {},
      warn: (message: unknown) => warnings.push(String(message)),
      error: () => {},
    };
    const config = loadConfig({
      DATABASE_URL: url as string,
      DATA_DIR: mkdtempSync(join(tmpdir(), 'sealpay-pool-')),
    });
    const deps = await createDeps(config, { logger: logger as never });
    try {
      await deps.database.db.execute(sql`select 1`);
      // The server drops every connection of this database (a restart, a failover, an idle timeout would).
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [new URL(url as string).pathname.slice(1)],
      );
      await admin.end();
      const deadline = Date.now() + 10_000;
      while (!warnings.some((warning) => warning.includes('database connection dropped'))) {
        if (Date.now() > deadline) throw new Error(`no warning: ${JSON.stringify(warnings)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const dropped = warnings.find((warning) => warning.includes('database connection dropped')) as string;
      expect(dropped).not.toContain(url as string);
      expect(dropped).not.toMatch(/postgres:\/\//);
      const answer = await deps.database.db.execute(sql`select 1 as one`);
      expect((answer as unknown as { rows: Array<{ one: number }> }).rows[0]?.one).toBe(1);
    } finally {
      await closeDeps(deps);
      await drop();
    }
  });
});
