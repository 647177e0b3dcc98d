/** Worker thread of `compactDump` (anvil-dump.ts): workerData is the dump's hex; posts the compacted hex back. */

import { parentPort, workerData } from 'node:worker_threads';
import { gunzipSync, gzipSync } from 'node:zlib';
import { withoutTraces } from './anvil-dump.ts';

const dump = Buffer.from((workerData as string).replace(/^0x/, ''), 'hex');
// Anvil gzips its dumps; it also reads plain JSON.
const json = dump[0] === 0x1f && dump[1] === 0x8b ? gunzipSync(dump) : dump;
parentPort?.postMessage(`0x${gzipSync(withoutTraces(json), { level: 1 }).toString('hex')}`);
