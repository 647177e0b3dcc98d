import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../test/harness.ts';
import { openDatabase } from './client.ts';
import { createWorkSignal, WORK_CHANNEL, type WorkSignal } from './work-signal.ts';

const quiet = { warn: () => {} };

/** Resolves on the next call of a subscriber, with the milliseconds it took. */
function nextWake(signal: WorkSignal): { woke: Promise<number>; stop: () => void } {
  const started = performance.now();
  let stop = () => {};
  const woke = new Promise<number>((resolve) => {
    stop = signal.subscribe('transactions', () => resolve(performance.now() - started));
  });
  return { woke, stop };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)),
  ]);
}

describe('work signal in one process', () => {
  it('wakes a subscriber of the same process, for its own queue only', async () => {
    const { database, drop } = await openTestDatabase();
    const signal = createWorkSignal(database, quiet);
    let emailWakes = 0;
    const stopEmail = signal.subscribe('email', () => {
      emailWakes++;
    });
    const { woke, stop } = nextWake(signal);
    signal.notify('transactions');
    await within(woke, 1000, 'local wake');
    stop();
    expect(emailWakes).toBe(0);
    signal.notify('email');
    expect(emailWakes).toBe(1);
    stopEmail();
    await signal.close();
    await database.close();
    await drop();
  });
});

describe.skipIf(!process.env.DATABASE_URL)('work signal across processes (PostgreSQL LISTEN/NOTIFY)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('wakes a worker of another process, and again after its LISTEN connection was cut', async () => {
    const { database: api, drop, url } = await openTestDatabase();
    cleanups.push(drop, () => api.close());
    const workerDatabase = await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 2 });
    cleanups.push(() => workerDatabase.close());
    const apiSignal = createWorkSignal(api, quiet);
    const workerSignal = createWorkSignal(workerDatabase, quiet);
    cleanups.push(
      () => apiSignal.close(),
      () => workerSignal.close(),
    );

    // Subscribing opens the LISTEN connection; once it is up, subscribers are woken once (for anything missed).
    const listening = nextWake(workerSignal);
    await within(listening.woke, 5000, 'LISTEN connection');
    listening.stop();

    const across = nextWake(workerSignal);
    apiSignal.notify('transactions');
    const latency = await within(across.woke, 2000, 'NOTIFY from the API process');
    across.stop();
    expect(latency).toBeLessThan(1000);

    // The LISTEN connection dies (a PostgreSQL restart, a proxy timeout): it is re-opened, and still works.
    const admin = new pg.Client({ connectionString: url as string });
    await admin.connect();
    const reconnected = nextWake(workerSignal);
    const cut = await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and query ilike $1 and pid <> pg_backend_pid()`,
      [`listen%${WORK_CHANNEL}%`],
    );
    expect(cut.rowCount).toBe(1);
    await within(reconnected.woke, 5000, 'reconnection');
    reconnected.stop();
    const again = nextWake(workerSignal);
    apiSignal.notify('transactions');
    await within(again.woke, 2000, 'NOTIFY after reconnection');
    again.stop();
    await admin.end();
  });
});
