import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { listKeys } from './keys.repository.ts';
import { ApiKey, toApiKey } from './keys.schema.ts';
import { createApiKey, revokeApiKey } from './keys.service.ts';

export function registerKeyRoutes(app: App, deps: Deps): void {
  app.post(
    '/keys',
    {
      config: { auth: 'session', errors: ['key_limit_reached'] },
      schema: {
        operationId: 'createApiKey',
        tags: ['API keys'],
        summary: 'Create an API key',
        description: 'The full key is in `plaintext`, shown exactly once. At most 10 active keys.',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
        }),
        response: responses({ 201: Type.Object({ key: ApiKey, plaintext: Type.String() }) }),
      },
    },
    async (request, reply) => {
      const { key, plaintext } = await createApiKey(deps, principalOf(request).user.id, request.body);
      return reply.code(201).send(ok({ key: toApiKey(key), plaintext }));
    },
  );

  app.get(
    '/keys',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'listApiKeys',
        tags: ['API keys'],
        summary: 'List API keys (metadata only)',
        response: responses({ 200: Type.Object({ keys: Type.Array(ApiKey) }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      return ok({ keys: (await listKeys(deps.database.db, user.id)).map(toApiKey) });
    },
  );

  app.delete(
    '/keys/:id',
    {
      config: { auth: 'session' },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['API keys'],
        summary: 'Revoke an API key',
        description: 'Immediate and idempotent: a repeat returns the same revoked key.',
        params: IdParam,
        response: responses({ 200: Type.Object({ key: ApiKey }) }),
      },
    },
    async (request) => {
      const revoked = await revokeApiKey(deps, principalOf(request).user.id, request.params.id);
      return ok({ key: toApiKey(revoked) });
    },
  );
}
