import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { ApiKey, KeyScopeFields, toApiKey } from './keys.schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './keys.service.ts';

export function registerKeyRoutes(app: App, deps: Deps): void {
  app.post(
    '/keys',
    {
      config: { auth: 'session', errors: ['key_limit_reached', 'not_found'] },
      schema: {
        operationId: 'createApiKey',
        tags: ['API keys'],
        summary: 'Create an API key',
        description:
          'The full key is in `plaintext`, shown exactly once. At most 10 active keys. Optionally scoped: ' +
          '`permissions: "read_only"` (every write is `403 insufficient_scope`), `walletIds` (the key sees and acts ' +
          'on these wallets alone; another wallet reads as `404 not_found`, creating a wallet is `403 ' +
          "insufficient_scope`; a wallet id that is not the account's is `404 not_found`), `spendLimit` (what " +
          'the key may send by `/transfer` and `POST /transfer/letter` in any 24 hours; past it `403 ' +
          'spend_limit_exceeded`). Without them the key may do everything an API key may.',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
          ...KeyScopeFields,
        }),
        response: responses({ 201: Type.Object({ key: ApiKey, plaintext: Type.String() }) }),
      },
    },
    async (request, reply) => {
      const { key, plaintext } = await createApiKey(deps, principalOf(request).user.id, request.body);
      return reply.code(201).send(ok({ key: toApiKey({ key, spent: 0n }), plaintext }));
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
        description:
          'A key bound to wallets sees only itself and the keys bound within its wallets. `spentLast24h` is on ' +
          'keys with a spend limit.',
        response: responses({ 200: Type.Object({ keys: Type.Array(ApiKey) }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const keys = await listApiKeys(deps, user.id, principal.scope);
      return ok({ keys: keys.map(toApiKey) });
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
