/**
 * The sandbox's test clock: real time plus an offset kept in the database (`test_clock`, migration 0013), so every
 * process of a deployment (API and worker processes on one PostgreSQL) runs on the same time, and `sealpay_now()`,
 * the default of every timestamp column, stamps rows with it too. The offset only grows.
 */
import { sql } from 'drizzle-orm';
import type { Clock } from '../lib/time.ts';
import { type Db, rows } from './client.ts';

/** How stale another process's move may be seen here, on PostgreSQL (the embedded database has one process). */
const REFRESH_MS = 1000;

export class DatabaseClock implements Clock {
  readonly #db: Db;
  readonly #base: Clock;
  readonly #shared: boolean;
  #offsetMs = 0;
  #loadedAt = 0;
  #loading: Promise<void> | null = null;

  /**
   * `base` is the time the offset is added to (the system clock; a test's own clock); `shared`: other processes may
   * move the offset (PostgreSQL), so it is read again when older than a second.
   */
  constructor(db: Db, base: Clock, options: { shared: boolean }) {
    this.#db = db;
    this.#base = base;
    this.#shared = options.shared;
  }

  /** Opens the clock at the offset the database holds. */
  static async open(db: Db, base: Clock, options: { shared: boolean }): Promise<DatabaseClock> {
    const clock = new DatabaseClock(db, base, options);
    await clock.refresh();
    return clock;
  }

  now(): Date {
    if (this.#shared && !this.#loading && Date.now() - this.#loadedAt > REFRESH_MS) {
      this.#loading = this.refresh()
        .catch(() => {}) // a database that is down: the last offset stands, and the next call reads it again
        .finally(() => {
          this.#loading = null;
        });
    }
    return new Date(this.#base.now().getTime() + this.#offsetMs);
  }

  /** The whole seconds the clock runs ahead of real time. */
  get offsetSeconds(): number {
    return this.#offsetMs / 1000;
  }

  /** Reads the offset from the database (never moving this process's clock back). */
  async refresh(): Promise<void> {
    const [row] = await rows<{ offset_seconds: string | number }>(
      this.#db,
      sql`select offset_seconds from test_clock where id = 1`,
    );
    this.#take(Number(row?.offset_seconds ?? 0));
  }

  /** Moves the clock forward by `seconds` for every process (one guarded statement: concurrent moves add up). */
  async advance(seconds: number): Promise<void> {
    const [row] = await rows<{ offset_seconds: string | number }>(
      this.#db,
      sql`insert into test_clock (id, offset_seconds) values (1, ${seconds})
        on conflict (id) do update set offset_seconds = test_clock.offset_seconds + excluded.offset_seconds,
          updated_at = now()
        returning offset_seconds`,
    );
    this.#take(Number(row?.offset_seconds ?? 0));
  }

  #take(offsetSeconds: number): void {
    this.#offsetMs = Math.max(this.#offsetMs, offsetSeconds * 1000);
    this.#loadedAt = Date.now();
  }
}
