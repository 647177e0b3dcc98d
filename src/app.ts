import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import scalarReference from '@scalar/fastify-api-reference';
import Fastify, { type FastifyServerOptions } from 'fastify';
import type { Deps } from './deps.ts';
import { installAuth } from './http/auth.ts';
import { ErrorEnvelope, ok } from './http/envelope.ts';
import { installErrorHandling } from './http/errors.ts';
import { installJsonParser } from './http/json.ts';
import { loggerOptions } from './http/logger.ts';
import { installMetrics } from './http/metrics.ts';
import type { App } from './http/types.ts';
import { type LoginExtensions, registerAccountRoutes } from './modules/accounts/accounts.routes.ts';
import { registerKeyRoutes } from './modules/keys/keys.routes.ts';
import { registerLetterRoutes } from './modules/letters/letters.routes.ts';
import { registerNetworkRoutes, registerRpcRoute } from './modules/network/network.routes.ts';
import { registerReceiptRoutes } from './modules/receipts/receipts.routes.ts';
import { registerSandboxRoutes } from './modules/sandbox/sandbox.routes.ts';
import { registerSecurityRoutes } from './modules/security/security.routes.ts';
import { totpSecondFactor } from './modules/security/totp.service.ts';
import { registerTransactionRoutes } from './modules/transactions/transactions.routes.ts';
import { registerWalletExportRoutes } from './modules/wallets/wallet-export.ts';
import { registerWalletRoutes } from './modules/wallets/wallets.routes.ts';
import { registerWebRoutes } from './modules/web/web.routes.ts';

export const API_PREFIX = '/api/v1';

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
}

/** Every plugin and every module's routes, in one screen. */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<App> {
  const app = Fastify({
    logger: options.logger ?? loggerOptions(deps.config.logLevel),
    trustProxy: deps.config.trustProxy,
    // Request ids only correlate log lines: a UUID is far cheaper than a cuid on every request.
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installJsonParser(app);
  installErrorHandling(app);
  await app.register(fastifyCookie, { secret: deps.keyring.derive('cookie-signing').toString('hex') });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sealpay: sealed payments',
        version: '1.0.0',
        description:
          'Confidential stablecoin payments on fhEVM, and letters of value. Every response is the envelope ' +
          '`{ok: true, data}` or `{ok: false, error: {code, message, details?}}`, except the sandbox probes.',
      },
      servers: [{ url: `${deps.config.publicOrigin}${API_PREFIX}` }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'svc_sk_… API key' },
          session: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const auth = (route.config as { auth?: string } | undefined)?.auth ?? 'none';
      const security: Record<string, string[]>[] =
        auth === 'either' ? [{ apiKey: [] }, { session: [] }] : auth === 'session' ? [{ session: [] }] : [];
      const path = url.startsWith(API_PREFIX) ? url.slice(API_PREFIX.length) || '/' : url;
      return { schema: { ...schema, security } as typeof schema, url: path };
    },
  });
  app.addSchema(ErrorEnvelope);
  const metrics = installMetrics(app, deps.config);

  const loginExtensions: LoginExtensions = { secondFactor: (user) => totpSecondFactor(deps, user) };
  await app.register(
    async (api) => {
      const typed = api as unknown as App;
      installAuth(typed, deps);
      registerSandboxRoutes(typed, deps);
      registerAccountRoutes(typed, deps, loginExtensions);
      registerKeyRoutes(typed, deps);
      registerNetworkRoutes(typed, deps);
      registerWalletRoutes(typed, deps);
      registerWalletExportRoutes(typed, deps);
      registerTransactionRoutes(typed, deps);
      registerReceiptRoutes(typed, deps);
      registerLetterRoutes(typed, deps);
      registerSecurityRoutes(typed, deps);
      typed.get('/openapi.json', { config: { rate: 'none' }, schema: { hide: true } }, async () =>
        app.swagger(),
      );
    },
    { prefix: API_PREFIX },
  );

  await app.register(scalarReference, {
    routePrefix: '/docs',
    configuration: { url: `${API_PREFIX}/openapi.json`, title: 'sealpay API reference' },
  });

  await registerRpcRoute(app, deps);
  await registerWebRoutes(app as unknown as App, deps);

  app.get('/healthz', { schema: { hide: true } }, async () => ok({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, { ok: boolean; detail?: string }> = {};
    try {
      await deps.database.ping();
      checks.database = { ok: true };
    } catch (error) {
      checks.database = { ok: false, detail: (error as Error).message };
    }
    checks.chain = deps.network
      ? await deps.network.ready().catch((e: Error) => ({ ok: false, detail: e.message }))
      : { ok: false, detail: 'not started' };
    const ready = Object.values(checks).every((check) => check.ok);
    if (!ready) {
      return reply
        .code(503)
        .send({ ok: false, error: { code: 'service_unavailable', message: 'Not ready.', details: checks } });
    }
    return ok({ status: 'ready', checks });
  });
  app.addHook('onClose', async () => {
    metrics.clear();
  });
  return app as unknown as App;
}
