import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { Nullable } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';

export const API_VERSION = 'v1';
export const SERVICE_NAME = 'sealpay';

/** The two unauthenticated probes: flat bodies, no envelope. */
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
}
