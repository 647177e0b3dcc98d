/**
 * A fault-injecting JSON-RPC proxy: real HTTP in front of a real endpoint (anvil, `sealpay devnet`). For each
 * request `decide` picks a fault or none; the proxy then answers as a failing provider would:
 *
 * - `http_503`: HTTP 503, nothing forwarded;
 * - `http_429`: HTTP 429 with a JSON-RPC limit error (-32005), nothing forwarded;
 * - `reset`: the connection destroyed, nothing forwarded;
 * - `stall`: nothing answered for `stallMs`, then the connection destroyed (nothing forwarded);
 * - `lost_answer`: forwarded (the node acts on it: a transaction is in its pool), then the connection destroyed
 *   instead of the answer.
 *
 * `kill()` closes it for good (connections refused from then on: a provider gone). `counts` says what it did.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyFault = 'http_503' | 'http_429' | 'reset' | 'stall' | 'lost_answer';

export interface RpcCall {
  method: string;
  /** Every method of the body (one, or a batch's). */
  methods: string[];
}

export interface FaultyRpcProxy {
  readonly url: string;
  /** Requests forwarded and answered, and each fault injected. */
  readonly counts: Record<ProxyFault | 'forwarded', number>;
  /** Requests forwarded and answered, per method. */
  readonly methods: Map<string, number>;
  decide: (call: RpcCall) => ProxyFault | null;
  kill(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startFaultyRpcProxy(options: {
  upstream: string;
  decide?: (call: RpcCall) => ProxyFault | null;
  stallMs?: number;
}): Promise<FaultyRpcProxy> {
  const stallMs = options.stallMs ?? 15_000;
  const sockets = new Set<Socket>();
  const counts: FaultyRpcProxy['counts'] = {
    forwarded: 0,
    http_503: 0,
    http_429: 0,
    reset: 0,
    stall: 0,
    lost_answer: 0,
  };
  const methods = new Map<string, number>();
  const proxy = {
    decide: options.decide ?? (() => null),
  } as { decide: (call: RpcCall) => ProxyFault | null };

  const server: Server = createServer(async (request, response) => {
    let body: string;
    try {
      body = await readBody(request);
    } catch {
      return;
    }
    let methodsOf: string[] = [];
    try {
      const parsed = JSON.parse(body) as { method?: string } | { method?: string }[];
      methodsOf = (Array.isArray(parsed) ? parsed : [parsed]).map((item) => String(item.method));
    } catch {
      methodsOf = ['(unparsed)'];
    }
    const fault = proxy.decide({ method: methodsOf[0] ?? '', methods: methodsOf });
    if (fault) counts[fault] += 1;
    if (fault === 'http_503') {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
      return;
    }
    if (fault === 'http_429') {
      response.writeHead(429, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32005, message: 'rate limit exceeded: too many requests' },
        }),
      );
      return;
    }
    if (fault === 'reset') {
      request.socket.destroy();
      return;
    }
    if (fault === 'stall') {
      setTimeout(() => request.socket.destroy(), stallMs).unref();
      return;
    }
    let upstream: Response;
    let text: string;
    try {
      upstream = await fetch(options.upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      text = await upstream.text();
    } catch {
      response.writeHead(502).end('Bad Gateway');
      return;
    }
    if (fault === 'lost_answer') {
      request.socket.destroy();
      return;
    }
    counts.forwarded += 1;
    for (const method of methodsOf) methods.set(method, (methods.get(method) ?? 0) + 1);
    response
      .writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      })
      .end(text);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let killed = false;
  return Object.assign(proxy, {
    url,
    counts,
    methods,
    async kill() {
      if (killed) return;
      killed = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  });
}
