/**
 * `sealpay devnet`: a standalone local network, as `hardhat node` with Zama's fhEVM plugin is to a dApp. The
 * embedded network (EVM, fhEVM host contracts, mock coprocessor, sealpay's contracts, journal) served as JSON-RPC
 * over HTTP, with the mock relayer's `fhevm_relayer_*` methods on the same URL.
 *
 * Like `hardhat node`, it funds the ten accounts of the test mnemonic and signs for them (`dev-accounts.ts`), names
 * itself as a Hardhat node (`node-identity.ts`) and answers a send or a call that reverts as Hardhat does
 * (`hardhat-reverts.ts`), so Zama's Hardhat plugin and templates, and test suites written for `hardhat node`, work
 * against it unmodified (README: "Use it from a Zama template").
 *
 * It writes what a service process needs to `{dataDir}/devnet.env` (mode 0600: it holds the operator's key).
 * Its state is the embedded network's (`{dataDir}/chain`): it survives SIGTERM and kill -9.
 */

import { renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { withDevAccounts } from './dev-accounts.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork, type Logger } from './embedded.ts';
import { withHardhatReverts } from './hardhat-reverts.ts';
import { handleJsonRpcBody, isDevnetRpcMethod, jsonRpcParseError, type RpcFunction } from './jsonrpc.ts';

/** Where `sealpay devnet` keeps its state and where it listens, and how it mines. */
export interface DevnetOptions {
  dataDir: string;
  host: string;
  port: number;
  /** Seconds between blocks (`--block-time`): interval mining instead of automine, as `anvil --block-time`. */
  blockTime?: number;
  logger?: Logger;
}

/** A running devnet: the embedded network served over HTTP, and how to stop it. */
export interface Devnet {
  readonly network: EmbeddedNetwork;
  /** `http://host:port` the JSON-RPC answers on. */
  readonly rpcUrl: string;
  /** The settings written to `devnet.env`, in order. */
  readonly settings: [string, string][];
  readonly envFile: string;
  close(): Promise<void>;
}

const BODY_LIMIT = 5 * 1024 * 1024;

function readBody(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        resolve(null);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body?: unknown): void {
  // Browser dApps call the devnet from their own origin, as they call hardhat node.
  response.setHeader('access-control-allow-origin', '*');
  response.setHeader('access-control-allow-headers', 'content-type');
  response.setHeader('access-control-allow-methods', 'POST, OPTIONS');
  if (body === undefined) {
    response.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body, (_key, value) =>
    typeof value === 'bigint' ? `0x${value.toString(16)}` : value,
  );
  response.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

function serveJsonRpc(rpc: RpcFunction): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    void (async () => {
      if (request.method === 'OPTIONS') return send(response, 204);
      if (request.method !== 'POST') {
        return send(response, 405, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'POST only' },
        });
      }
      const text = await readBody(request);
      if (text === null) return send(response, 413, jsonRpcParseError());
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return send(response, 200, jsonRpcParseError());
      }
      const answer = await handleJsonRpcBody(rpc, body, { allowMethod: isDevnetRpcMethod });
      if (answer === null) return send(response, 204);
      return send(response, 200, answer);
    })().catch((error: unknown) => {
      if (!response.headersSent) {
        send(response, 500, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: error instanceof Error ? error.message : 'Internal error' },
        });
      }
    });
  };
}

function writeEnvFile(file: string, settings: [string, string][]): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${settings.map(([name, value]) => `${name}=${value}`).join('\n')}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Starts the embedded network in `options.dataDir` (deploying sealpay's contracts on first start), serves it as
 * JSON-RPC over HTTP on `host:port` and writes `devnet.env`. Debug methods that reveal cleartexts are not served.
 * `close()` stops the server, then the network (which takes its final snapshot).
 */
export async function startDevnet(options: DevnetOptions): Promise<Devnet> {
  const network = await createEmbeddedNetwork({
    dataDir: options.dataDir,
    fundDevAccounts: true,
    ...(options.blockTime ? { blockTime: options.blockTime } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  let server: Server;
  try {
    server = createServer(serveJsonRpc(withHardhatReverts(withDevAccounts(network.rpc, network))));
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    await network.close();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const rpcUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  const settings: [string, string][] = [
    ['NETWORK', 'devnet'],
    ['RPC_URL', rpcUrl],
    ['STABLECOIN_ADDRESS', network.contracts.stablecoin],
    ['CONFIDENTIAL_TOKEN_ADDRESS', network.contracts.confidentialToken],
    ['LETTER_VAULT_ADDRESS', network.contracts.letterVault],
    ...(network.transferBatcher
      ? [['TRANSFER_BATCHER_ADDRESS', network.transferBatcher] as [string, string]]
      : []),
    ['OPERATOR_PRIVATE_KEY', network.operator.privateKey],
  ];
  const envFile = path.join(options.dataDir, 'devnet.env');
  writeEnvFile(envFile, settings);
  return {
    network,
    rpcUrl,
    settings,
    envFile,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await network.close();
    },
  };
}
