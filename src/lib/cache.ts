/** Small in-process caches; each instance belongs to one service (it hangs on `Deps`), never to the module. */

/** A map that forgets its oldest entry once it holds `max`: for values that never go stale, bounded. */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.max && !this.entries.has(key)) {
      this.entries.delete(this.entries.keys().next().value as K);
    }
    this.entries.set(key, value);
  }
}

/**
 * One value fetched at most once per `ttlMs` (concurrent callers share the fetch); a fetch that fails is not kept,
 * so the next caller fetches again.
 */
export class ExpiringValue<T> {
  private cached: { at: number; value: Promise<T> } | null = null;
  private readonly ttlMs: number;
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  get(fetch: () => Promise<T>): Promise<T> {
    const cached = this.cached;
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.value;
    const entry = { at: Date.now(), value: fetch() };
    this.cached = entry;
    entry.value.catch(() => {
      if (this.cached === entry) this.cached = null;
    });
    return entry.value;
  }
}
