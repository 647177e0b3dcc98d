/**
 * `npm run bench`: API-key authentication throughput, start to ready, 200 confidential transfers through the
 * API against the same transfers sent straight to the chain, and the production topology on one machine (devnet,
 * 1 then 3 workers on PostgreSQL; devnet restart after 50 and 2,000 transfers), the paged list at 10⁶ rows on
 * PGlite and PostgreSQL, 20 concurrent letter claims, client CPU per confidential transfer alone and batched
 * (`batching`), and, only when named, the real SDK's input proof (`proofs`) and confidential transfers under a 10×
 * base-fee spike on a devnet with 1 s blocks (`publicchain`). Prints a table and writes bench/results.json.
 *
 * Everything targets 127.0.0.1; each part is bounded to well under two minutes on a 2-core machine.
 * `npm run bench -- auth startup` runs only the named parts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { type AuthResult, runAuthBench } from './auth.ts';
import { type BatchingResult, runBatchingBench } from './batching.ts';
import { type ClaimsResult, runClaimsBench } from './claims.ts';
import { type PagingResult, runPagingBench } from './paging.ts';
import { type ProofsResult, runProofsBench } from './proofs.ts';
import { type PublicChainResult, runPublicChainBench } from './publicchain.ts';
import { runScaleoutBench, type ScaleoutResult } from './scaleout.ts';
import { runStartupBench, type StartupResult } from './startup.ts';
import { runTransfersBench, type TransfersResult } from './transfers.ts';

const RESULTS = new URL('./results.json', import.meta.url);
const parts = process.argv.slice(2);
// `proofs` takes minutes of CPU (once more to make its keys), `publicchain` five minutes of wall time (its 60 s spike
// and the runs around it): they run only when named.
const ON_REQUEST = ['proofs', 'publicchain'];
const wanted = (name: string) => (parts.length === 0 && !ON_REQUEST.includes(name)) || parts.includes(name);

interface Results {
  date: string;
  machine: { node: string; cpus: number; cpuModel: string; memoryGiB: number };
  auth?: AuthResult;
  startup?: StartupResult;
  transfers?: TransfersResult;
  scaleout?: ScaleoutResult;
  proofs?: ProofsResult;
  batching?: BatchingResult;
  paging?: PagingResult;
  claims?: ClaimsResult;
  publicchain?: PublicChainResult;
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
const loadCells = (f: AuthResult['helloWorld']) => [
  f.requestsPerSecond,
  f.latencyP50Ms,
  f.latencyP99Ms,
  f.non2xx,
  f.errors,
];

results.auth = await part('auth', () => runAuthBench());
results.startup = await part('startup', () => runStartupBench());
results.transfers = await part('transfers', () => runTransfersBench());
results.scaleout = await part('scaleout', () => runScaleoutBench());
results.proofs = await part('proofs', () => runProofsBench());
results.batching = await part('batching', () => runBatchingBench(results.proofs));
results.paging = await part('paging', () => runPagingBench());
results.claims = await part('claims', () => runClaimsBench());
results.publicchain = await part('publicchain', () => runPublicChainBench());
/**
 * The file keeps every part's latest run: a run of some parts (`npm run bench -- publicchain`) replaces theirs and
 * leaves the others' as they were (`date` and `machine` are this run's; `partSeconds` says which parts it ran).
 */
function mergedWithEarlierParts(ran: Results): Results {
  let earlier: Partial<Results> = {};
  try {
    earlier = JSON.parse(readFileSync(RESULTS, 'utf8')) as Partial<Results>;
  } catch {
    // No earlier results (or unreadable ones): this run's alone.
  }
  const fresh = Object.fromEntries(Object.entries(ran).filter(([, value]) => value !== undefined));
  return { ...earlier, ...fresh, partSeconds: { ...earlier.partSeconds, ...ran.partSeconds } } as Results;
}
writeFileSync(RESULTS, `${JSON.stringify(mergedWithEarlierParts(results), null, 2)}\n`);

const out: string[] = [
  `sealpay bench, ${results.date}, Node ${results.machine.node}, ${results.machine.cpus} × ${results.machine.cpuModel}`,
];
if (results.auth) {
  const a = results.auth;
  out.push(
    table(
      `a. API-key auth throughput (autocannon, ${a.connections} connections, ${a.rounds} rounds of ${a.durationSeconds} s each, in turn)`,
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
      [
        line('1 worker process', d.oneWorker),
        line('3 worker processes', d.threeWorkers),
        [
          'direct to the devnet (viem)',
          d.direct.wallMs,
          d.direct.perSecond,
          d.direct.medianMs,
          d.direct.p95Ms,
          '200/0',
        ],
      ],
    ),
    `ratio API / direct on the devnet ${d.ratioOneWorker} with 1 worker, ${d.ratioThreeWorkers} with 3 (target ≤ 1.25): ${verdict(Math.min(d.ratioOneWorker, d.ratioThreeWorkers) <= 1.25)}`,
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
if (results.proofs) {
  const p = results.proofs;
  out.push(
    table(
      `e. One input proof with the real SDK (${p.sdk}), euint64 amounts per proof`,
      ['amounts', 'CPU s per proof', 'CPU s per amount', 'wall s', 'proof bytes'],
      p.costs.map((c) => [c.amounts, c.cpuSeconds, c.cpuSecondsPerAmount, c.wallSeconds, c.proofBytes]),
    ),
    `  · key and CRS ${p.keyGeneration.cached ? 'from the cache' : `generated in ${p.keyGeneration.cpuSeconds} CPU s`}`,
    ...p.notes.map((note) => `  · ${note}`),
  );
}
if (results.batching) {
  const b = results.batching;
  out.push(
    table(
      `f. Client CPU per confidential transfer with the real SDK's proofs: ${b.transfers} transfers from ${b.wallets} wallets through the worker`,
      ['sent', 'CPU s per transfer', 'input proofs', 'legs per transaction'],
      [
        ['alone (one proof each)', b.cpuSecondsPerTransferUnbatched, b.transfers, 1],
        ['batched by the worker', b.cpuSecondsPerTransferBatched, b.inputProofs, b.batchSizes.join(' ')],
      ],
    ),
    `  · ${b.confirmed} CONFIRMED, ${b.failed} FAILED in ${b.wallMs} ms; ${b.encryptedAmounts} encrypted amounts`,
    `ratio unbatched / batched ${b.ratio} (target ≥ ${b.target}): ${verdict(b.ratio >= b.target)}`,
    ...b.notes.map((note) => `  · ${note}`),
  );
}
if (results.paging) {
  const p = results.paging;
  const ms = (f: { medianMs: number; p95Ms: number }) => `${f.medianMs} / ${f.p95Ms}`;
  out.push(
    table(
      'g. GET /transactions at 10⁶ rows (median / p95 ms, sequential)',
      [
        'database',
        'seed 10⁶ s',
        'page 1, 10³ rows',
        'page 1, 10⁶ rows',
        'last page by cursor',
        'last page by page (OFFSET)',
      ],
      p.runs.map((r) => [
        r.database,
        Math.round(r.seedMs / 100) / 10,
        ms(r.page1Small),
        ms(r.page1Large),
        ms(r.lastPageByCursor),
        ms(r.lastPageByOffset),
      ]),
    ),
    ...p.runs.flatMap((r) => [
      `${r.database}: ratio page 1 at 10⁶ / 10³ rows ${r.ratioLargeToSmall} (target ≤ ${p.target}): ${verdict(r.ratioLargeToSmall <= p.target)}`,
      `${r.database}: ratio last page by cursor / page 1 ${r.ratioLastToFirst} (target ≤ ${p.target}): ${verdict(r.ratioLastToFirst <= p.target)}`,
    ]),
    table(
      `GET /transactions?page=1 throughput (autocannon, ${p.throughput.connections} connections, ${p.throughput.rounds} rounds of ${p.throughput.durationSeconds} s each, in turn)`,
      ['route', 'req/s (2xx)', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'],
      [
        ['bare Fastify GET /hello', ...loadCells(p.throughput.helloWorld)],
        ['GET /api/v1/transactions?page=1 (API key, 10⁶ rows)', ...loadCells(p.throughput.transactionsPage1)],
      ],
    ),
    `ratio ${p.throughput.ratio} (target ≥ ${p.throughput.target}): ${verdict(p.throughput.ratio >= p.throughput.target)}`,
    ...p.notes.map((note) => `  · ${note}`),
  );
}
if (results.claims) {
  const c = results.claims;
  out.push(
    table(
      `h. ${c.letters} concurrent claims of ${c.letters} letters (embedded network)`,
      ['wall ms', 'median ms', 'p99 ms', 'max ms', 'claimed'],
      [[c.wallMs, c.medianMs, c.p99Ms, c.maxMs, `${c.claimed}/${c.letters}`]],
    ),
    `p99 ${c.p99Ms} ms (target ≤ ${c.target} ms): ${verdict(c.p99Ms <= c.target && c.claimed === c.letters)}`,
    ...c.notes.map((note) => `  · ${note}`),
  );
}
if (results.publicchain) {
  const p = results.publicchain;
  const line = (name: string, f: PublicChainResult['calm']) => [
    name,
    `${f.confirmedWithin60s}/${f.transfers}`,
    `${f.confirmed}/${f.failed}`,
    f.transactions,
    f.gasPerTransfer,
    f.feeGweiPerTransfer,
  ];
  out.push(
    table(
      'i. Confidential transfers on sealpay devnet with 1 s blocks (npm start, NETWORK=devnet)',
      [
        'run',
        'confirmed in 60 s',
        'confirmed/failed',
        'transactions',
        'gas per transfer',
        'fee gwei per transfer',
      ],
      [
        line('calm (base fee 1 gwei), batched', p.calm),
        line('10× base-fee spike for 60 s, batched', p.spike),
        line('calm, one transfer per transaction', p.alone),
      ],
    ),
    `share confirmed within the spike ${p.shareWithinSpike} (target ≥ ${p.shareTarget}): ${verdict(p.shareWithinSpike >= p.shareTarget)}`,
    `per transfer, spike / calm: gas ${p.gasRatioSpikeToCalm}, fee paid ${p.feeRatioSpikeToCalm}`,
    `gas per transfer batched / alone ${p.batchedToAlone} (target ≤ ${p.batchedTarget}): ${verdict(p.batchedToAlone > 0 && p.batchedToAlone <= p.batchedTarget)}`,
    ...p.notes.map((note) => `  · ${note}`),
  );
  if (p.profile.length > 0) {
    const sum = (pick: (part: (typeof p.profile)[number]) => number) =>
      p.profile.reduce((total, part) => total + pick(part), 0);
    out.push(
      table(
        `j. Where a confidential transfer's gas goes (debug_traceTransaction): a batch of ${p.profiledLegs} per leg, beside one alone`,
        ['contract.function (own gas)', 'batched, per transfer', 'alone'],
        [
          ...p.profile.map((part) => [part.part, part.batchedPerTransfer, part.alone]),
          ['total', sum((part) => part.batchedPerTransfer), sum((part) => part.alone)],
        ],
      ),
    );
  }
}
out.push(
  `\nparts took ${Object.entries(results.partSeconds)
    .map(([name, seconds]) => `${name} ${seconds} s`)
    .join(', ')}; results in bench/results.json`,
);
console.log(out.join('\n'));
