/**
 * Anvil's state dump (`anvil_dumpState`: gzip'ed JSON of accounts, blocks, transactions with their receipts) made
 * fit for a snapshot. Anvil keeps a call trace of every transaction and puts them all in the dump: ~45 kB per
 * confidential transfer, nine tenths of the dump, and what makes loading it slow. The snapshot keeps the dump
 * without them (`"traces":[]`): blocks, transactions, receipts and logs stay, and only `debug_traceTransaction` of
 * a transaction mined before the snapshot answers empty after a restart (the journaled chain serves no `trace_*`).
 *
 * The work (gunzip, scan, gzip: ~1 s of CPU at 2,000 transfers) runs in a worker thread, off the service's loop.
 */
import { Worker } from 'node:worker_threads';

const KEY = Buffer.from('"traces":[');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * The dump's JSON with every `"traces": [...]` array emptied. In JSON a quote inside a string is always escaped, so
 * the bytes `"traces":[` can only be that key; its array is skipped to the matching bracket, strings respected.
 */
export function withoutTraces(json: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (;;) {
    const at = json.indexOf(KEY, from);
    if (at === -1) break;
    const open = at + KEY.length - 1;
    let depth = 0;
    let inString = false;
    let end = open;
    for (; end < json.length; end++) {
      const byte = json[end] as number;
      if (inString) {
        if (byte === BACKSLASH) end++;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (OPENERS.has(byte)) depth++;
      else if (CLOSERS.has(byte) && --depth === 0) break;
    }
    if (end >= json.length) throw new Error('Anvil state dump: a traces array is not closed');
    parts.push(json.subarray(from, open + 1));
    from = end;
  }
  parts.push(json.subarray(from));
  return Buffer.concat(parts);
}

/** `anvil_dumpState`'s hex, without the call traces, as a hex gzip `anvil_loadState` takes. Runs in a worker. */
export function compactDump(dumpHex: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./anvil-dump.worker.ts', import.meta.url), { workerData: dumpHex });
    worker.once('message', (compacted: string) => resolve(compacted));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`The anvil dump worker exited with code ${code}`));
    });
  });
}
