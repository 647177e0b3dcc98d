import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { AppError, missingSetting } from '../lib/errors.ts';
import { constantTimeEqual } from '../lib/secrets.ts';
import { installErrorHandling, refuseConnect, sendError, writeClientError } from './errors.ts';

/**
 * Who may read `/metrics`. With METRICS_TOKEN set, only `Authorization: Bearer <METRICS_TOKEN>` (else
 * `401 unauthenticated`), in any environment. Without it, the sandbox leaves the metrics open and production
 * answers `503 configuration_missing` naming METRICS_TOKEN, as the sweep does without SWEEP_SECRET: the
 * endpoint exists, it is the operator's setting that is missing.
 */
export function assertMetricsAccess(
  config: Pick<Config, 'environment' | 'metricsToken'>,
  authorization: string | undefined,
): void {
  const token = config.metricsToken;
  if (!token) {
    if (config.environment === 'production') throw missingSetting('METRICS_TOKEN');
    return;
  }
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!given || !constantTimeEqual(given, token)) {
    throw new AppError(
      'unauthenticated',
      'The metrics need the operator token: Authorization: Bearer <token>.',
    );
  }
}

export function installMetrics(
  app: FastifyInstance,
  config: Pick<Config, 'environment' | 'metricsToken'>,
  /** The process's own counters (`Deps.metrics`), shown after the app's. */
  service: Registry,
): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'sealpay_' });
  const duration = new Histogram({
    name: 'sealpay_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  app.addHook('onResponse', (request, reply, done) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      onRequest: async (request) => assertMetricsAccess(config, request.headers.authorization),
    },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return `${await registry.metrics()}\n${await service.metrics()}`;
    },
  );
  return registry;
}

/**
 * A `worker` process serves no API, yet the chain work is its own: replacements, price refusals, waits at the fee
 * cap, reorgs, each provider's requests and failures. With WORKER_METRICS_PORT set it serves `/metrics` alone on
 * HOST:WORKER_METRICS_PORT, under the API's access rule and in its envelope (any other path is `404 not_found`), so
 * a scraper reads each worker as it reads each `serve`.
 */
export async function startMetricsServer(
  config: Pick<Config, 'environment' | 'metricsToken' | 'host'>,
  service: Registry,
  port: number,
  logger: FastifyBaseLogger,
): Promise<{ port: number; close: () => Promise<void> }> {
  const app = Fastify({
    loggerInstance: logger,
    // A scrape every few seconds is not worth a log line; errors are still logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // A path the router cannot read (a bad escape, an over-long parameter) names no route of this server.
    frameworkErrors: (_error, _request, reply) => sendError(reply, new AppError('not_found', 'Not found.')),
    clientErrorHandler: writeClientError,
    http: { requireHostHeader: false },
  });
  app.server.on('connect', refuseConnect);
  installErrorHandling(app);
  installMetrics(app, config, service);
  await app.listen({ port, host: config.host });
  const { port: bound } = app.server.address() as AddressInfo;
  return { port: bound, close: () => app.close() };
}
