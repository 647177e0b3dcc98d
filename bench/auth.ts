/**
 * Part a: API-key authentication throughput. `GET /api/v1/auth/session` with an API key against a bare Fastify
 * hello-world route: same Fastify, same machine, same load tool (autocannon, in this process) and connections.
 * Each server runs in its own child process.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

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
  helloWorld: LoadFigures;
  apiKeySession: LoadFigures;
  ratio: number;
  target: number;
  notes: string[];
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
  options: { connections?: number; duration?: number; warmup?: number } = {},
): Promise<AuthResult> {
  const connections = options.connections ?? 10;
  const duration = options.duration ?? 10;
  const warmup = options.warmup ?? 2;

  const hello = await startServer('./servers/hello.ts');
  let helloWorld: LoadFigures;
  try {
    const url = `http://127.0.0.1:${hello.info.port}/hello`;
    await load(url, {}, connections, warmup);
    helloWorld = await load(url, {}, connections, duration);
  } finally {
    await hello.stop();
  }

  const api = await startServer('./servers/api.ts', {
    RATE_LIMIT_READS_PER_MINUTE: '100000000',
    LOG_LEVEL: 'warn',
  });
  let apiKeySession: LoadFigures;
  try {
    const url = `http://127.0.0.1:${api.info.port}/api/v1/auth/session`;
    const headers = { authorization: api.info.authorization as string };
    await load(url, headers, connections, warmup);
    apiKeySession = await load(url, headers, connections, duration);
  } finally {
    await api.stop();
  }

  return {
    connections,
    durationSeconds: duration,
    helloWorld,
    apiKeySession,
    ratio: Number((apiKeySession.requestsPerSecond / helloWorld.requestsPerSecond).toFixed(3)),
    target: 0.5,
    notes: [
      'requests per second count 2xx answers only',
      `RATE_LIMIT_READS_PER_MINUTE=100000000: the read limiter runs on every request but never answers 429`,
      'LOG_LEVEL=warn for the service (no per-request log lines); the hello-world app has no logger',
      'the service runs buildApp over createDeps(config, {network: false}) on embedded PGlite, in a child process',
      `${warmup} s warm-up per server before the measured ${duration} s`,
    ],
  };
}
