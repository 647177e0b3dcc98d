/**
 * JSON-RPC over anvil's IPC socket (`anvil --ipc <path>`), the only channel the service uses to reach its anvil.
 *
 * Framing, as anvil 1.7.1 does it: a request is one JSON value written to the socket (anvil finds its end by its
 * brackets); each answer is one compact JSON value followed by "\n" (a newline inside a JSON string is always
 * escaped, so "\n" can only end an answer). Anvil serves the requests of one connection concurrently and answers
 * them in any order: answers are matched to requests by id. Answers can be large (`anvil_dumpState`: tens of MB),
 * so the bytes of an unfinished answer are kept as chunks and joined once, never rescanned.
 */
import { connect, type Socket } from 'node:net';
import { RpcError } from './evm.ts';

const NEWLINE = 0x0a;
const CONNECT_RETRY_MS = 20;

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

interface RpcAnswer {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** An open IPC connection to anvil: requests, and its end. */
export interface AnvilIpc {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
  close(): void;
}

function connectOnce(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Connects to anvil's socket, waiting for anvil to make it (it prints its HTTP address before its IPC server is
 * surely listening) until `deadline` (ms since the epoch) or until `gone()` says anvil has exited.
 */
export async function connectAnvilIpc(
  socketPath: string,
  deadline: number,
  gone: () => string | null,
): Promise<AnvilIpc> {
  for (;;) {
    try {
      return openChannel(await connectOnce(socketPath), gone);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const notYet = code === 'ENOENT' || code === 'ECONNREFUSED';
      if (!notYet || gone() !== null || Date.now() > deadline) {
        throw new Error(
          `anvil's IPC socket ${socketPath} did not accept a connection: ${(error as Error).message}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
    }
  }
}

function openChannel(socket: Socket, gone: () => string | null): AnvilIpc {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let partial: Buffer[] = [];
  let closedBy: string | null = null;

  const failAll = (reason: string) => {
    closedBy ??= reason;
    for (const { reject } of pending.values()) reject(new Error(closedBy));
    pending.clear();
  };
  const answer = (line: Buffer) => {
    const body = JSON.parse(line.toString('utf8')) as RpcAnswer;
    if (body.id === undefined) return;
    const waiting = pending.get(body.id);
    if (!waiting) return;
    pending.delete(body.id);
    if (pending.size === 0) socket.unref();
    if (body.error) waiting.reject(new RpcError(body.error.code, body.error.message, body.error.data));
    else waiting.resolve(body.result);
  };

  socket.on('data', (chunk: Buffer) => {
    let from = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, from)) {
      partial.push(chunk.subarray(from, end));
      const line = partial.length === 1 ? (partial[0] as Buffer) : Buffer.concat(partial);
      partial = [];
      from = end + 1;
      if (line.length > 0) answer(line);
    }
    if (from < chunk.length) partial.push(chunk.subarray(from));
  });
  const onGone = () => {
    const exit = gone();
    failAll(
      exit
        ? `The chain engine (anvil) is not running: it ${exit}`
        : 'The chain engine (anvil) closed its IPC connection',
    );
  };
  socket.on('error', onGone);
  socket.on('close', onGone);
  // The connection keeps the event loop alive only while an answer is awaited (anvil goes with the service).
  socket.unref();

  return {
    request({ method, params }) {
      if (closedBy) return Promise.reject(new Error(closedBy));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        if (pending.size === 0) socket.ref();
        pending.set(id, { resolve, reject });
        socket.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: params ?? [] }));
      });
    },
    close() {
      failAll('The chain engine (anvil) IPC connection is closed');
      socket.destroy();
    },
  };
}
