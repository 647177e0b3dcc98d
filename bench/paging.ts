/**
 * Part e: paged lists at 10⁶ rows. Two accounts seeded straight into the database (10³ and 10⁶ transactions,
 * `generate_series`), then through HTTP with an API key: `GET /transactions?page=1` for each (item 1: the total
 * is not counted at read time), the 10⁶ account's last page by `cursor` against its page 1 (item 2), and, for
 * reference, the same last page by `page` (OFFSET). On PGlite, then on PostgreSQL. Then throughput of
 * `GET /transactions?page=1` (the 10⁶ account, PGlite) against bare Fastify, as part a measures the API-key read.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Comparison, compareThroughput, type LoadFigures, startServer } from './auth.ts';
import { percentile } from './transfers.ts';

export interface LatencySample {
  samples: number;
  medianMs: number;
  p95Ms: number;
}

export interface PagingOnDatabase {
  database: string;
  seedMs: number;
  smallRows: number;
  largeRows: number;
  page1Small: LatencySample;
  page1Large: LatencySample;
  lastPageByCursor: LatencySample;
  lastPageByOffset: LatencySample;
  ratioLargeToSmall: number;
  ratioLastToFirst: number;
}

export interface PagingResult {
  runs: PagingOnDatabase[];
  target: number;
  throughput: {
    connections: number;
    durationSeconds: number;
    rounds: number;
    helloWorld: LoadFigures;
    transactionsPage1: LoadFigures;
    roundRatios: number[];
    ratio: number;
    target: number;
  };
  notes: string[];
}

const PAGE_SIZE = 20;

/**
 * Sequential GETs, one of each request in turn (round-robin), so that every request is measured under the same
 * load of the machine: on a shared machine that load changes within seconds.
 */
async function timeGets(requests: { url: string; authorization: string }[], samples: number, warmup: number) {
  const once = async ({ url, authorization }: { url: string; authorization: string }) => {
    const started = performance.now();
    const response = await fetch(url, { headers: { authorization } });
    const body = (await response.json()) as { data?: { items?: unknown[] } };
    if (response.status !== 200 || body.data?.items?.length !== PAGE_SIZE) {
      throw new Error(`${url}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    return performance.now() - started;
  };
  const times = requests.map(() => [] as number[]);
  for (let i = 0; i < warmup + samples; i++) {
    for (const [n, request] of requests.entries()) {
      const ms = await once(request);
      if (i >= warmup) times[n]?.push(ms);
    }
  }
  return times.map((values) => ({
    samples,
    medianMs: Number(percentile(values, 50).toFixed(2)),
    p95Ms: Number(percentile(values, 95).toFixed(2)),
  }));
}

interface ListsServerInfo {
  port: number;
  database: string;
  seedMs: number;
  smallRows: number;
  largeRows: number;
  small: string;
  large: string;
  lastPageCursor: string;
}

async function measureOn(
  env: Record<string, string>,
  largeRows: number,
  alsoOnServer?: (info: ListsServerInfo) => Promise<void>,
): Promise<PagingOnDatabase> {
  const server = await startServer('./servers/lists.ts', { ...env, LARGE_ROWS: String(largeRows) });
  try {
    const info = server.info as unknown as ListsServerInfo;
    const list = `http://127.0.0.1:${info.port}/api/v1/transactions?pageSize=${PAGE_SIZE}`;
    const lastPage = Math.ceil(info.largeRows / PAGE_SIZE);
    const [page1Small, page1Large, lastPageByCursor] = (await timeGets(
      [
        { url: `${list}&page=1`, authorization: info.small },
        { url: `${list}&page=1`, authorization: info.large },
        { url: `${list}&cursor=${info.lastPageCursor}`, authorization: info.large },
      ],
      200,
      30,
    )) as [LatencySample, LatencySample, LatencySample];
    const [lastPageByOffset] = (await timeGets(
      [{ url: `${list}&page=${lastPage}`, authorization: info.large }],
      10,
      2,
    )) as [LatencySample];
    await alsoOnServer?.(info);
    return {
      database: info.database,
      seedMs: info.seedMs,
      smallRows: info.smallRows,
      largeRows: info.largeRows,
      page1Small,
      page1Large,
      lastPageByCursor,
      lastPageByOffset,
      ratioLargeToSmall: Number((page1Large.medianMs / page1Small.medianMs).toFixed(2)),
      ratioLastToFirst: Number((lastPageByCursor.medianMs / page1Large.medianMs).toFixed(2)),
    };
  } finally {
    await server.stop();
  }
}

async function withPostgresDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `sealpay_bench_lists_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

export async function runPagingBench(
  options: { largeRows?: number; connections?: number; rounds?: number; roundSeconds?: number } = {},
): Promise<PagingResult> {
  const largeRows = options.largeRows ?? 1_000_000;
  const connections = options.connections ?? 10;
  const rounds = options.rounds ?? 5;
  const roundSeconds = options.roundSeconds ?? 3;
  const hello = await startServer('./servers/hello.ts');
  let comparison: Comparison | undefined;
  const runs: PagingOnDatabase[] = [];
  try {
    runs.push(
      await measureOn({}, largeRows, async (info) => {
        comparison = await compareThroughput(
          { url: `http://127.0.0.1:${hello.info.port}/hello`, headers: {} },
          {
            url: `http://127.0.0.1:${info.port}/api/v1/transactions?page=1&pageSize=${PAGE_SIZE}`,
            headers: { authorization: info.large },
          },
          { connections, rounds, roundSeconds, warmup: 2 },
        );
      }),
    );
  } finally {
    await hello.stop();
  }
  runs.push(await withPostgresDatabase((url) => measureOn({ DATABASE_URL: url }, largeRows)));
  if (!comparison) throw new Error('the throughput run did not happen');

  return {
    runs,
    target: 1.5,
    throughput: {
      connections,
      durationSeconds: roundSeconds,
      rounds,
      helloWorld: comparison.reference,
      transactionsPage1: comparison.subject,
      roundRatios: comparison.roundRatios,
      ratio: comparison.ratio,
      target: 0.35,
    },
    notes: [
      `latencies: sequential GETs from this process (pageSize ${PAGE_SIZE}, API key), page 1 of each account and the last page by cursor in turn (same load for all three), 30 warm-up rounds then 200 measured; the OFFSET last page 2 then 10`,
      'seeded rows: every type and status in turn over two wallets, three rows per millisecond, one INSERT … generate_series each (list_totals kept by the statement trigger), then ANALYZE',
      'the cursor of the last page is that of the row just before it, in the list order (what the previous page would have returned as nextCursor)',
      `throughput: autocannon, ${connections} connections, the 10⁶ account's page 1 on PGlite against hello world, 2 s warm-up each, then ${rounds} rounds of ${roundSeconds} s each in turn; ratio = median of the rounds' ratios (${comparison.roundRatios.join(', ')}); 2xx only`,
      'PostgreSQL: a fresh database on DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards',
    ],
  };
}
