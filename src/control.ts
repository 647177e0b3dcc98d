/**
 * Operator commands while the service runs on the embedded database. PGlite lives inside the one process that
 * opened it (`database.lock`), so `sealpay accounts …` and `sealpay reconcile` cannot open it a second time: it sends the command to the
 * running process over a Unix socket in DATA_DIR (mode 0600: only the operator's user can connect), and the
 * running process executes it with its own dependencies, so the change is immediate (caches evicted) and
 * persisted in its database. With no service running, the command opens the database itself.
 */
import { chmodSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Deps } from './deps.ts';
import { runAccountsCommand } from './modules/accounts/accounts.cli.ts';
import { reconcile } from './modules/reconcile/reconcile.service.ts';

export interface ControlRequest {
  command: 'accounts' | 'reconcile' | 'ping';
  action?: string;
  options?: { email?: string; name?: string; company?: string };
}

export type ControlResponse = { ok: true; output: string } | { ok: false; error: string };

export function controlSocketPath(dataDir: string): string {
  return join(dataDir, 'control.sock');
}

async function execute(deps: Deps, request: ControlRequest): Promise<ControlResponse> {
  try {
    if (request.command === 'ping') return { ok: true, output: 'running' };
    if (request.command === 'accounts') {
      return {
        ok: true,
        output: await runAccountsCommand(deps, request.action ?? '', request.options ?? {}),
      };
    }
    // The report as JSON: the caller prints it as a table or as it is.
    if (request.command === 'reconcile') return { ok: true, output: JSON.stringify(await reconcile(deps)) };
    return { ok: false, error: 'unknown command' };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

/** Listens on `DATA_DIR/control.sock`; returns the function that closes it. */
export async function startControlServer(deps: Deps): Promise<() => Promise<void>> {
  const path = controlSocketPath(deps.config.dataDir);
  // The database lock is ours, so a socket file left here belongs to a process that is gone.
  rmSync(path, { force: true });
  const server: Server = createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 64 * 1024) return socket.destroy();
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      let request: ControlRequest;
      try {
        request = JSON.parse(buffer.slice(0, newline)) as ControlRequest;
      } catch {
        socket.end(`${JSON.stringify({ ok: false, error: 'malformed request' })}\n`);
        return;
      }
      void execute(deps, request).then((response) => socket.end(`${JSON.stringify(response)}\n`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(path, { force: true });
  };
}

/** Sends one command to the running service; null when none is running in this DATA_DIR. */
export async function sendControlRequest(
  dataDir: string,
  request: ControlRequest,
): Promise<ControlResponse | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(controlSocketPath(dataDir));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => {
      try {
        resolve(JSON.parse(answer) as ControlResponse);
      } catch {
        reject(new Error('the running service sent no answer'));
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolve(null);
      else reject(error);
    });
  });
}
