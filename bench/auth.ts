/**
 * Part a: API-key authentication throughput. `GET /api/v1/auth/session` with an API key against a bare Fastify
 * hello-world route: same Fastify, same machine, same load tool (autocannon, in this process) and connections.
 * Each server runs in its own child process.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { percentile } from './transfers.ts';

export interface LoadFigures {
  requestsPerSecond: number;
  total: number;
  non2xx: number;
  errors: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

export interface AuthResult {
  connections: number;
  durationSeconds: number;
  rounds: number;
  helloWorld: LoadFigures;
  apiKeySession: LoadFigures;
  roundRatios: number[];
  ratio: number;
  target: number;
  notes: string[];
}

/** A URL to load, with its request headers. */
export interface LoadTarget {
  url: string;
  headers: Record<string, string>;
}

/** `subject` against `reference`: the figures of each one's median round, and the median of the rounds' ratios. */
export interface Comparison {
  reference: LoadFigures;
  subject: LoadFigures;
  roundRatios: number[];
  ratio: number;
}

/**
 * Throughput of `subject` against `reference`, in alternating rounds (reference, subject, reference, …), both servers
 * up throughout (the one not loaded is idle). This machine's speed drifts by a factor of up to two within a minute,
 * so one long run of each compared two different machines; rounds side by side compare the same one.
 */
export async function compareThroughput(
  reference: LoadTarget,
  subject: LoadTarget,
  options: { connections: number; rounds: number; roundSeconds: number; warmup: number },
): Promise<Comparison> {
  const { connections, rounds, roundSeconds, warmup } = options;
  await load(reference.url, reference.headers, connections, warmup);
  await load(subject.url, subject.headers, connections, warmup);
  const references: LoadFigures[] = [];
  const subjects: LoadFigures[] = [];
  for (let round = 0; round < rounds; round += 1) {
    references.push(await load(reference.url, reference.headers, connections, roundSeconds));
    subjects.push(await load(subject.url, subject.headers, connections, roundSeconds));
  }
  const roundRatios = subjects.map((figures, round) =>
    Number((figures.requestsPerSecond / (references[round] as LoadFigures).requestsPerSecond).toFixed(3)),
  );
  const atMedian = (all: LoadFigures[]) => {
    const middle = percentile(
      all.map((figures) => figures.requestsPerSecond),
      50,
    );
    return all.find((figures) => figures.requestsPerSecond === middle) as LoadFigures;
  };
  return {
    reference: atMedian(references),
    subject: atMedian(subjects),
    roundRatios,
    ratio: percentile(roundRatios, 50),
  };
}

export async function startServer(script: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  lines.on('line', () => {});
  const info = JSON.parse(first) as { port: number; authorization?: string; readsPerMinute?: number };
  return {
    info,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export async function load(
  url: string,
  headers: Record<string, string>,
  connections: number,
  duration: number,
): Promise<LoadFigures> {
  const result = await autocannon({ url, headers, connections, duration, pipelining: 1 });
  const okCount = result['2xx'];
  return {
    requestsPerSecond: Math.round(okCount / duration),
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
  };
}

export async function runAuthBench(
  options: { connections?: number; rounds?: number; roundSeconds?: number; warmup?: number } = {},
): Promise<AuthResult> {
  const connections = options.connections ?? 10;
  const rounds = options.rounds ?? 5;
  const roundSeconds = options.roundSeconds ?? 3;
  const warmup = options.warmup ?? 2;

  const hello = await startServer('./servers/hello.ts');
  const api = await startServer('./servers/api.ts', {
    RATE_LIMIT_READS_PER_MINUTE: '100000000',
    LOG_LEVEL: 'warn',
  });
  let comparison: Comparison;
  try {
    comparison = await compareThroughput(
      { url: `http://127.0.0.1:${hello.info.port}/hello`, headers: {} },
      {
        url: `http://127.0.0.1:${api.info.port}/api/v1/auth/session`,
        headers: { authorization: api.info.authorization as string },
      },
      { connections, rounds, roundSeconds, warmup },
    );
  } finally {
    await hello.stop();
    await api.stop();
  }

  return {
    connections,
    durationSeconds: roundSeconds,
    rounds,
    helloWorld: comparison.reference,
    apiKeySession: comparison.subject,
    roundRatios: comparison.roundRatios,
    ratio: comparison.ratio,
    target: 0.5,
    notes: [
      'requests per second count 2xx answers only',
      `RATE_LIMIT_READS_PER_MINUTE=100000000: the read limiter runs on every request but never answers 429`,
      'LOG_LEVEL=warn for the service (no per-request log lines); the hello-world app has no logger',
      'the service runs buildApp over createDeps(config, {network: false}) on embedded PGlite, in a child process',
      `${warmup} s warm-up per server, then ${rounds} rounds of ${roundSeconds} s each, hello world and the service in turn; ratio = median of the rounds' ratios (${comparison.roundRatios.join(', ')}), figures = each one's median round`,
    ],
  };
}
