import type { FastifyInstance } from 'fastify';
import { handleJsonRpcBody, jsonRpcParseError } from '../../adapters/chain/jsonrpc.ts';
import type { Deps } from '../../deps.ts';
import { ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { NetworkInfo } from './network.schema.ts';
import { requireNetwork } from './network.service.ts';

export function registerNetworkRoutes(app: App, deps: Deps): void {
  app.get(
    '/network',
    {
      config: { auth: 'none', rate: 'none', errors: ['configuration_missing'] },
      schema: {
        operationId: 'getNetwork',
        tags: ['Network'],
        summary: 'The chain, its contracts and how confidential it is',
        response: responses({ 200: NetworkInfo }),
      },
    },
    async () => {
      const network = requireNetwork(deps);
      return ok({
        network: network.name,
        environment: deps.config.environment,
        chainId: network.chainId,
        rpcUrl: network.rpc ? `${deps.config.publicOrigin}/rpc` : network.upstreamRpcUrl,
        explorerBaseUrl: network.explorerBaseUrl,
        confidentiality: network.rail.kind,
        contracts: { ...network.contracts },
      });
    },
  );
}

/**
 * `POST /rpc`: the embedded chain's JSON-RPC for wallets and tools (reads and raw transactions; no node-side
 * signing, no chain rewriting). Outside `/api/v1`, no envelope: JSON-RPC has its own.
 */
export async function registerRpcRoute(app: FastifyInstance, deps: Deps): Promise<void> {
  const rpc = deps.network?.rpc;
  if (!rpc) return;
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'string', bodyLimit: 5 * 1024 * 1024 },
      (_request, body, done) => {
        try {
          done(null, { parsed: JSON.parse(String(body)) });
        } catch {
          done(null, { parseError: true });
        }
      },
    );
    scope.post('/rpc', { schema: { hide: true } }, async (request, reply) => {
      const body = request.body as { parsed?: unknown; parseError?: boolean } | undefined;
      if (!body || body.parseError) return reply.send(jsonRpcParseError());
      const response = await handleJsonRpcBody(rpc, body.parsed);
      if (response === null) return reply.code(204).send();
      return reply.send(response);
    });
  });
}
