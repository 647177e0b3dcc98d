import { randomUUID } from 'node:crypto';
import ajvCompiler, { type BuildCompilerFromPool, type ValidatorFactory } from '@fastify/ajv-compiler';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalarReference from '@scalar/fastify-api-reference';
import Fastify, { type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Deps } from './deps.ts';
import {
  API_REFERENCE_CONFIGURATION,
  contentSecurityPolicyOf,
  withPageLanguage,
} from './http/api-reference.ts';
import { installAuth } from './http/auth.ts';
import { ErrorEnvelope, ok } from './http/envelope.ts';
import {
  frameworkErrorOf,
  installErrorHandling,
  refuseConnect,
  sendError,
  writeClientError,
} from './http/errors.ts';
import { installHostCheck } from './http/host-check.ts';
import { installInputChecks, installJsonParser } from './http/input.ts';
import { configuredSecrets, createRedactor, loggerOptions } from './http/logger.ts';
import { installMetrics } from './http/metrics.ts';
import { transformDocument, transformRoute } from './http/openapi.ts';
import type { App } from './http/types.ts';
import { AppError } from './lib/errors.ts';
import { type LoginExtensions, registerAccountRoutes } from './modules/accounts/accounts.routes.ts';
import { resolveSession } from './modules/accounts/accounts.service.ts';
import { registerKeyRoutes } from './modules/keys/keys.routes.ts';
import { resolveApiKey } from './modules/keys/keys.service.ts';
import { registerLetterActionRoutes } from './modules/letters/letter-actions.routes.ts';
import { registerLetterClaimRoutes } from './modules/letters/letter-claims.routes.ts';
import { registerLetterRoutes } from './modules/letters/letters.routes.ts';
import { registerNetworkRoutes, registerRpcRoute } from './modules/network/network.routes.ts';
import { registerNotificationRoutes } from './modules/notifications/notifications.routes.ts';
import { registerReceiptRoutes } from './modules/receipts/receipts.routes.ts';
import { registerRecoveryRoutes } from './modules/recovery/recovery.routes.ts';
import { registerSandboxRoutes } from './modules/sandbox/sandbox.routes.ts';
import { registerPasskeyRoutes } from './modules/security/passkeys.routes.ts';
import { registerSecurityRoutes } from './modules/security/security.routes.ts';
import { totpSecondFactor } from './modules/security/totp.service.ts';
import { registerTransactionReadRoutes } from './modules/transactions/transaction-reads.routes.ts';
import { registerTransactionRoutes } from './modules/transactions/transactions.routes.ts';
import { registerWalletRoutes } from './modules/wallets/wallets.routes.ts';
import { registerWebRoutes } from './modules/web/web.routes.ts';
import { registerWebhookDeliveryRoutes } from './modules/webhooks/webhook-deliveries.routes.ts';
import { registerWebhookRoutes } from './modules/webhooks/webhooks.routes.ts';

export const API_PREFIX = '/api/v1';

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
}

const AJV_OPTIONS = { allErrors: true, removeAdditional: false } as const;

/**
 * Bodies are JSON, whose types mean what they say: `"7"` is not an integer and `"true"` is not a boolean, so body
 * schemas are checked without coercion. Query strings, path parameters and headers are text, parsed by their
 * schema's type.
 */
// Fastify's own `ajv` options are not used: these are the only Ajv settings, and no plugins are added.
const buildValidator = ((externalSchemas: Parameters<BuildCompilerFromPool>[0]) => {
  const strict = ajvCompiler()(externalSchemas, { customOptions: { ...AJV_OPTIONS, coerceTypes: false } });
  const parsing = ajvCompiler()(externalSchemas, { customOptions: { ...AJV_OPTIONS, coerceTypes: 'array' } });
  // Fastify calls the compiler with the route's definition (`{schema, httpPart, …}`), though the types say schema.
  return ((route: { httpPart?: string }) =>
    (route.httpPart === 'body' ? strict : parsing)(route as never)) as never;
}) as ValidatorFactory;

/**
 * `TRUST_PROXY` as Fastify takes it. A hop count becomes "trust the nearest N hops" (Fastify's own number form
 * trusts none, since it cannot check the peer): deploy it only where clients cannot reach the service but through
 * the proxies; a list of the proxies' addresses is checked against each hop.
 */
function trustProxyOf(
  trusted: false | number | string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  return typeof trusted === 'number' ? (_address, hop) => hop < trusted : trusted;
}

/**
 * Headers on every answer: `nosniff` everywhere; `Cache-Control: no-store` on every API answer that did not choose
 * its own (keys, exported wallets, TOTP secrets, balances); HSTS when the public origin is https. Set by an onSend
 * hook, and by the answers that no route's hooks see (a path the router cannot decode).
 */
function securityHeaders(https: boolean): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    if (https) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    if (request.url.startsWith(API_PREFIX) && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store');
    }
  };
}

/** Every plugin and every module's routes, in one screen. */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<App> {
  const { config } = deps;
  const setSecurityHeaders = securityHeaders(config.publicOrigin.startsWith('https://'));
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel, createRedactor(configuredSecrets(config))),
    trustProxy: trustProxyOf(config.trustProxy),
    // Request ids only correlate log lines: a UUID is far cheaper than a cuid on every request.
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    // Long enough that an over-long id reaches its schema (and reads as not found), short of abuse.
    routerOptions: { maxParamLength: 512 },
    schemaController: { compilersFactory: { buildValidator } },
    frameworkErrors: (_error, request, reply) => {
      setSecurityHeaders(request, reply);
      return sendError(reply, frameworkErrorOf(request, `${API_PREFIX}/transfer/letter/`));
    },
    clientErrorHandler: writeClientError,
    // Node answers an HTTP/1.1 request without Host with a bare 400 of its own: it is let through and refused by
    // installInputChecks, in the envelope.
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.server.on('connect', refuseConnect);
  installJsonParser(app);
  installInputChecks(app);
  installHostCheck(app, config);
  installErrorHandling(app);
  app.addHook('onSend', (request, reply, payload, done) => {
    setSecurityHeaders(request, reply);
    // The id of this request in the service's log lines: a client reports it (`SealpayError.requestId`).
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  await app.register(fastifyCookie, { secret: deps.keyring.derive('cookie-signing').toString('hex') });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sealpay: sealed payments',
        version: '1.0.0',
        description:
          'Confidential stablecoin payments on fhEVM, and letters of value. Every response is the envelope ' +
          '`{ok: true, data}` or `{ok: false, error: {code, message, details?}}`, except the sandbox probes. ' +
          'Every response under a limit carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` ' +
          '(a `429` also `Retry-After`); a request refused with `403` (`session_required`, `account_disabled`, ' +
          "…) counts against the principal's budget like any other, a write against its write budget.",
      },
      servers: [{ url: `${deps.config.publicOrigin}${API_PREFIX}` }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'svc_sk_… API key' },
          session: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
          operatorSecret: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Sweep-Secret',
            description: 'the operator secret (SWEEP_SECRET)',
          },
        },
      },
    },
    // Schemas added by id (`app.addSchema`) are documented under that id, not `def-N`.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: transformRoute(API_PREFIX),
    transformObject: transformDocument(ErrorEnvelope.$id ?? 'ErrorEnvelope'),
  });
  app.addSchema(ErrorEnvelope);
  const metrics = installMetrics(app, deps.config, deps.metrics.registry);

  const loginExtensions: LoginExtensions = { secondFactor: (user) => totpSecondFactor(deps, user) };
  await app.register(
    async (api) => {
      const typed: App = api;
      installAuth(typed, deps, { apiKey: resolveApiKey, session: resolveSession });
      registerSandboxRoutes(typed, deps);
      registerAccountRoutes(typed, deps, loginExtensions);
      registerKeyRoutes(typed, deps);
      registerNetworkRoutes(typed, deps);
      registerWalletRoutes(typed, deps);
      registerTransactionRoutes(typed, deps);
      registerTransactionReadRoutes(typed, deps);
      registerReceiptRoutes(typed, deps);
      registerLetterRoutes(typed, deps);
      registerLetterClaimRoutes(typed, deps);
      registerLetterActionRoutes(typed, deps);
      registerSecurityRoutes(typed, deps);
      registerPasskeyRoutes(typed, deps);
      registerWebhookRoutes(typed, deps);
      registerWebhookDeliveryRoutes(typed, deps);
      registerRecoveryRoutes(typed, deps);
      registerNotificationRoutes(typed, deps, resolveSession);
      typed.get(
        '/openapi.json',
        { config: { auth: 'none', rate: 'none' }, schema: { hide: true } },
        async () => app.swagger(),
      );
    },
    { prefix: API_PREFIX },
  );

  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply, payload) => {
      const page = withPageLanguage(payload);
      reply.header('content-security-policy', contentSecurityPolicyOf(page));
      reply.header('x-frame-options', 'DENY');
      // As the web app's pages: the reference's address goes to no other site.
      reply.header('referrer-policy', 'no-referrer');
      return page;
    });
    await docs.register(scalarReference, {
      routePrefix: '/docs',
      configuration: { url: `${API_PREFIX}/openapi.json`, ...API_REFERENCE_CONFIGURATION },
    });
  });

  await registerRpcRoute(app, deps);
  await registerWebRoutes(app, deps);

  app.get('/healthz', { schema: { hide: true } }, async () => ok({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const detail: Record<string, { ok: boolean; detail?: string }> = {};
    try {
      await deps.database.ping();
      detail.database = { ok: true };
    } catch (error) {
      detail.database = { ok: false, detail: (error as Error).message };
    }
    detail.chain = deps.network
      ? await deps.network.ready().catch((e: Error) => ({ ok: false, detail: e.message }))
      : { ok: false, detail: 'not started' };
    // The public sees which dependency is down, never its raw message (hosts, settings); the log has it.
    const checks = Object.fromEntries(
      Object.entries(detail).map(([name, check]) => [name, { ok: check.ok }]),
    );
    const ready = Object.values(detail).every((check) => check.ok);
    if (!ready) {
      request.log.warn({ checks: detail }, 'not ready');
      return sendError(reply, new AppError('service_unavailable', 'Not ready.', { details: checks }));
    }
    return ok({ status: 'ready', checks });
  });
  app.addHook('onClose', async () => {
    metrics.clear();
  });
  return app;
}
