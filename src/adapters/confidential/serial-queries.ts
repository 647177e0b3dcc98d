/**
 * How the mock coprocessor is queried: one pass at a time (`serialQueue`), and decryptions that arrive during a pass
 * sharing the next one (`coalescingQuery`).
 */

/**
 * The mock coprocessor replays chain events into its handle database when queried, and two queries at once
 * interleave that replay ("Parse event … in backward order"). Decryptions of one coprocessor therefore run one at a
 * time.
 */
export function serialQueue(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = tail.then(work, work);
    tail = next.catch(() => {});
    return next;
  };
}

interface PendingQuery {
  handles: string[];
  resolve: (values: string[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Decryption queries that arrive while a pass of the coprocessor runs share the next pass: one replay of the new
 * chain events and one lookup for all their handles, instead of one serialized pass each (20 concurrent claims made
 * 40 passes, each re-reading the same blocks). A combined pass that fails is retried query by query, so that one bad
 * handle fails only its own query.
 */
export function coalescingQuery(
  runSerially: <T>(work: () => Promise<T>) => Promise<T>,
  query: (handles: string[]) => Promise<string[]>,
): (handles: string[]) => Promise<string[]> {
  let waiting: PendingQuery[] = [];
  let draining = false;
  const runOne = async (pending: PendingQuery) => {
    try {
      pending.resolve(await runSerially(() => query(pending.handles)));
    } catch (error) {
      pending.reject(error);
    }
  };
  const drain = async () => {
    draining = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      if (batch.length === 1) {
        await runOne(batch[0] as PendingQuery);
        continue;
      }
      const all = [...new Set(batch.flatMap((pending) => pending.handles.map((h) => h.toLowerCase())))];
      try {
        const values = await runSerially(() => query(all));
        const byHandle = new Map(all.map((handle, i) => [handle, values[i] as string]));
        for (const pending of batch) {
          pending.resolve(pending.handles.map((handle) => byHandle.get(handle.toLowerCase()) as string));
        }
      } catch {
        for (const pending of batch) await runOne(pending);
      }
    }
    draining = false;
  };
  return (handles) =>
    new Promise<string[]>((resolve, reject) => {
      waiting.push({ handles, resolve, reject });
      if (!draining) void drain();
    });
}
