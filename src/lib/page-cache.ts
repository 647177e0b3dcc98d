/**
 * Answers of a list kept as the bytes sent, per account, while nothing of the account changed. Kept as Buffers:
 * a string is encoded to UTF-8 again on every write, which was half the thread's time for a kept 9 KB page.
 * `GET /transactions` keeps its pages here on the embedded database only: one process owns it and hears, from migration 0008's
 * notifications, which account's transactions each commit changed, before the writer hears its commit
 * (src/db/pglite-thread.ts). A client polling its list (a dashboard, an integrator waiting for a status) then costs
 * no statement until something of its account changed.
 *
 * Exactness: every account has a generation, raised on each change. An answer is kept only under the generation
 * its reads began in, and served only while that generation is still the account's: a read that overlapped a
 * commit is never served after it. On PostgreSQL (other processes write, and a notification arrives after their
 * commit) there is no cache.
 */
import { BoundedMap } from './cache.ts';

/** At most this many answers (~9 KB each for a page of 20): the oldest go first. */
const MAX_PAGES = 2_000;

interface KeptPage {
  generation: number;
  body: Buffer;
}

export class AccountPageCache {
  readonly #pages = new BoundedMap<string, KeptPage>(MAX_PAGES);
  readonly #generations = new Map<string, number>();

  /** `subscribe` hears which account changed (for transactions: `Database.transactionChanges`). */
  constructor(subscribe: (listener: (userId: string) => void) => () => void) {
    subscribe((userId) => {
      this.#generations.set(userId, this.generation(userId) + 1);
    });
  }

  /** The account's current generation: read before a page's reads begin, handed to `keep` with the answer. */
  generation(userId: string): number {
    return this.#generations.get(userId) ?? 0;
  }

  /** The answer kept for this account and request, if nothing of the account changed since it was read. */
  find(userId: string, request: string): Buffer | undefined {
    const kept = this.#pages.get(pageKey(userId, request));
    return kept && kept.generation === this.generation(userId) ? kept.body : undefined;
  }

  keep(userId: string, request: string, generation: number, body: Buffer): void {
    if (generation !== this.generation(userId)) return;
    this.#pages.set(pageKey(userId, request), { generation, body });
  }
}

function pageKey(userId: string, request: string): string {
  return `${userId}\n${request}`;
}
