/**
 * `npm run bench`: API-key authentication throughput, start to ready, 200 confidential transfers through the
 * API against the same transfers sent straight to the chain, and the production topology on one machine (devnet,
 * 1 then 3 workers on PostgreSQL; devnet restart after 50 and 2,000 transfers). Prints a table and writes
 * bench/results.json.
 *
 * Everything targets 127.0.0.1; each part is bounded to well under two minutes on a 2-core machine.
 * `npm run bench -- auth startup` runs only the named parts.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { type AuthResult, runAuthBench } from './auth.ts';
import { runScaleoutBench, type ScaleoutResult } from './scaleout.ts';
import { runStartupBench, type StartupResult } from './startup.ts';
import { runTransfersBench, type TransfersResult } from './transfers.ts';

const RESULTS = new URL('./results.json', import.meta.url);
const parts = process.argv.slice(2);
const wanted = (name: string) => parts.length === 0 || parts.includes(name);

interface Results {
  date: string;
  machine: { node: string; cpus: number; cpuModel: string; memoryGiB: number };
  auth?: AuthResult;
  startup?: StartupResult;
  transfers?: TransfersResult;
  scaleout?: ScaleoutResult;
  partSeconds: Record<string, number>;
}

const results: Results = {
  date: new Date().toISOString(),
  machine: {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  },
  partSeconds: {},
};

async function part<T>(name: string, run: () => Promise<T>): Promise<T | undefined> {
  if (!wanted(name)) return undefined;
  process.stderr.write(`bench: ${name}…\n`);
  const started = performance.now();
  const value = await run();
  results.partSeconds[name] = Math.round((performance.now() - started) / 100) / 10;
  return value;
}

function row(cells: (string | number)[], widths: number[]): string {
  return cells.map((cell, i) => String(cell).padEnd(widths[i] ?? 10)).join('  ');
}

function table(title: string, header: string[], lines: (string | number)[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i] ?? '').length)));
  return [
    `\n${title}`,
    row(header, widths),
    row(
      widths.map((w) => '-'.repeat(w)),
      widths,
    ),
    ...lines.map((l) => row(l, widths)),
  ].join('\n');
}

const verdict = (ok: boolean) => (ok ? 'meets target' : 'MISSES target');

results.auth = await part('auth', () => runAuthBench());
results.startup = await part('startup', () => runStartupBench());
results.transfers = await part('transfers', () => runTransfersBench());
results.scaleout = await part('scaleout', () => runScaleoutBench());
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);

const out: string[] = [
  `sealpay bench, ${results.date}, Node ${results.machine.node}, ${results.machine.cpus} × ${results.machine.cpuModel}`,
];
if (results.auth) {
  const a = results.auth;
  out.push(
    table(
      `a. API-key auth throughput (autocannon, ${a.connections} connections, ${a.durationSeconds} s each)`,
      ['route', 'req/s (2xx)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'],
      [
        [
          'bare Fastify GET /hello',
          a.helloWorld.requestsPerSecond,
          a.helloWorld.latencyP50Ms,
          a.helloWorld.latencyP99Ms,
          a.helloWorld.non2xx,
          a.helloWorld.errors,
        ],
        [
          'GET /api/v1/auth/session (API key)',
          a.apiKeySession.requestsPerSecond,
          a.apiKeySession.latencyP50Ms,
          a.apiKeySession.latencyP99Ms,
          a.apiKeySession.non2xx,
          a.apiKeySession.errors,
        ],
      ],
    ),
    `ratio ${a.ratio} (target ≥ ${a.target}): ${verdict(a.ratio >= a.target)}`,
    ...a.notes.map((note) => `  · ${note}`),
  );
}
if (results.startup) {
  const s = results.startup;
  out.push(
    table(
      'b. Start to ready (node src/main.ts start → GET /readyz 200)',
      ['start', 'ms'],
      [
        ['cold (fresh DATA_DIR)', s.coldMs],
        [`warm (after ${s.transactionsBeforeWarmRestart} transactions, SIGTERM)`, s.warmAfterTransactionsMs],
        [`after kill -9 (${s.inFlightAtKill} transfers in flight)`, s.afterKill9Ms],
      ],
    ),
    `  · in flight at the kill, after the restart: ${s.recoveredAfterKill.confirmed} CONFIRMED, ${s.recoveredAfterKill.failed} FAILED`,
    ...s.notes.map((note) => `  · ${note}`),
  );
}
if (results.transfers) {
  const t = results.transfers;
  const line = (
    name: string,
    f: { wallMs: number; medianMs: number; p95Ms: number; maxMs: number; perSecond: number },
  ) => [name, f.wallMs, f.perSecond, f.medianMs, f.p95Ms, f.maxMs];
  out.push(
    table(
      `c. ${t.transfers} confidential transfers (${t.senders} senders), all in flight`,
      ['path', 'wall ms', 'per s', 'median ms', 'p95 ms', 'max ms'],
      [
        line('API (POST /transfer → CONFIRMED, list every 25 ms)', t.api),
        line('API, lighter client (list every 250 ms)', t.apiLightPolling),
        line('direct to the chain (viem)', t.direct),
        line('direct + silent-zero decryption', t.directWithVerification),
      ],
    ),
    `  · API outcomes: ${t.api.confirmed} CONFIRMED, ${t.api.failed} FAILED (worker concurrency ${t.api.workerConcurrency})`,
    `ratio API / direct ${t.ratio} (target ≤ ${t.target}): ${verdict(t.ratio <= t.target)}; with the lighter client ${t.ratioLightPolling}`,
    ...t.notes.map((note) => `  · ${note}`),
  );
}
if (results.scaleout) {
  const d = results.scaleout;
  const line = (name: string, f: ScaleoutResult['oneWorker']) => [
    name,
    f.wallMs,
    f.perSecond,
    f.medianMs,
    f.p95Ms,
    `${f.confirmed}/${f.failed}`,
  ];
  out.push(
    table(
      `d. Production topology: ${d.transfers} confidential transfers through the API on sealpay devnet + PostgreSQL`,
      ['workers', 'wall ms', 'per s', 'median ms', 'p95 ms', 'confirmed/failed'],
      [line('1 worker process', d.oneWorker), line('3 worker processes', d.threeWorkers)],
    ),
    table(
      'Restart (SIGTERM, start again; medians of 3)',
      [
        'process',
        'after transfers',
        'serving ms',
        'first decryption ms',
        'each restart (serving/decryption)',
      ],
      d.restart.map((r) => [r.process, r.after, r.servingMs, r.firstDecryptionMs, r.samples]),
    ),
    `restart ratio 2,000 / 50, worst of the four ${d.restartRatio} (target ≤ ${d.restartTarget}): ${verdict(d.restartRatio <= d.restartTarget)}`,
    ...d.notes.map((note) => `  · ${note}`),
  );
}
out.push(
  `\nparts took ${Object.entries(results.partSeconds)
    .map(([name, seconds]) => `${name} ${seconds} s`)
    .join(', ')}; results in bench/results.json`,
);
console.log(out.join('\n'));
