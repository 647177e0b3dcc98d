import { Type } from '@sinclair/typebox';
import type { onRequestHookHandler } from 'fastify';
import type { Deps } from '../../deps.ts';
import { Nullable, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { iso } from '../../lib/time.ts';
import { advanceTestClock, readTestClock, type TestClockView } from './clock.service.ts';
import { AdvanceClockBody, TestClock } from './sandbox.schema.ts';

export const API_VERSION = 'v1';
export const SERVICE_NAME = 'sealpay';

/** The two unauthenticated probes (flat bodies, no envelope), and the test clock. */
export function registerSandboxRoutes(app: App, deps: Deps): void {
  app.get(
    '/sandbox',
    {
      config: { auth: 'none', rate: 'none', flat: true },
      schema: {
        operationId: 'getSandboxStatus',
        tags: ['Sandbox'],
        summary: 'Status probe (flat, no envelope)',
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            service: Type.String(),
            version: Type.String(),
            environment: Type.String(),
            network: Type.String(),
            chainId: Nullable(Type.Integer()),
            timestamp: Type.String({ format: 'date-time' }),
          }),
        },
      },
    },
    async () => ({
      ok: true as const,
      service: SERVICE_NAME,
      version: API_VERSION,
      environment: deps.config.environment,
      network: deps.config.network,
      chainId: deps.network?.chainId ?? null,
      timestamp: deps.clock.now().toISOString(),
    }),
  );

  app.post(
    '/sandbox',
    {
      config: { auth: 'none', rate: 'none', flat: true, anyJson: true },
      schema: {
        operationId: 'echoSandbox',
        tags: ['Sandbox'],
        summary: 'JSON echo (flat, no envelope)',
        description: 'Any valid JSON body is echoed. Invalid JSON answers 400 `{ok: false, error: string}`.',
        response: {
          200: Type.Object({
            ok: Type.Literal(true),
            service: Type.String(),
            version: Type.String(),
            echo: Type.Unknown(),
            timestamp: Type.String({ format: 'date-time' }),
          }),
          400: Type.Object({ ok: Type.Literal(false), error: Type.String() }),
        },
      },
    },
    async (request) => ({
      ok: true as const,
      service: SERVICE_NAME,
      version: API_VERSION,
      echo: request.body ?? null,
      timestamp: deps.clock.now().toISOString(),
    }),
  );

  registerTestClockRoutes(app, deps);
}

const CLOCK_DESCRIPTION =
  'Sandbox only (`local`, `devnet`): `404 not_found` in production, whatever the headers. Authenticated by the ' +
  'operator secret in `X-Sweep-Secret` (SWEEP_SECRET; `503 configuration_missing` while it is not set), as the ' +
  'sweep. The test clock is real time plus an offset kept in the database, so every process of the deployment ' +
  'sees it; it never moves back. Everything that reads time follows it: letter expiry and the sweep, API-key ' +
  'expiry, session lifetime, rate-limit and faucet windows, retry and webhook schedules. TOTP codes and webhook ' +
  'signatures (`webhook-timestamp`) stay on real time (an authenticator app and a webhook receiver check them ' +
  'against their own clocks).';

function toTestClock(view: TestClockView) {
  return { now: iso(view.now), offsetSeconds: view.offsetSeconds };
}

function registerTestClockRoutes(app: App, deps: Deps): void {
  if (deps.config.environment !== 'sandbox') {
    // Production has no test clock, and says so before anything else (credential, content type, body): a route's
    // onRequest hook runs before the body is read, as for the faucet.
    const noClock: onRequestHookHandler = (request, _reply, done) =>
      done(new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: '/sandbox/clock',
        config: { auth: 'none', rate: 'none' },
        schema: { hide: true },
        onRequest: noClock,
        handler: async () => {
          throw new AppError('not_found', 'There is no test clock in production.');
        },
      });
    }
    return;
  }
  app.get(
    '/sandbox/clock',
    {
      config: { auth: 'operator', rate: 'none' },
      schema: {
        operationId: 'getTestClock',
        tags: ['Sandbox'],
        summary: 'The test clock (sandbox only)',
        description: CLOCK_DESCRIPTION,
        response: responses({ 200: TestClock }),
      },
    },
    async () => ok(toTestClock(await readTestClock(deps))),
  );

  app.post(
    '/sandbox/clock',
    {
      config: { auth: 'operator', rate: 'none' },
      schema: {
        operationId: 'advanceTestClock',
        tags: ['Sandbox'],
        summary: 'Move the test clock forward (sandbox only)',
        description:
          `${CLOCK_DESCRIPTION} \`{"advanceSeconds": N}\` moves it N seconds forward (1 to 34,560,000: 400 ` +
          'days) and answers the clock as it now reads. A letter past its `expiresAt` is expired and refunded by ' +
          'the next sweep (or at once by a claim, which answers `410 letter_expired`); an API key past its expiry ' +
          'answers `401 invalid_api_key`; a session past its 24 hours `401 session_expired`.',
        body: AdvanceClockBody,
        response: responses({ 200: TestClock }),
      },
    },
    async (request) => ok(toTestClock(await advanceTestClock(deps, request.body.advanceSeconds))),
  );
}
