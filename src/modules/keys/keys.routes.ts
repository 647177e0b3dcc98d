import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import { apiKeys, users } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { forgetCredential } from '../../http/credential-cache.ts';
import { IdParam, NullableTimestamp, ok, responses, Timestamp } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { iso } from '../../lib/time.ts';
import { type ApiKeyRow, countActiveKeys, findKey, listKeys } from './keys.repository.ts';

export const MAX_ACTIVE_KEYS = 10;
const KEY_PREFIX = 'svc_sk_';
const DAY_MS = 24 * 60 * 60 * 1000;

const ApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    keyPrefix: Type.String({ description: 'svc_sk_ plus the first characters of the key' }),
    lastUsedAt: NullableTimestamp,
    expiresAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);

function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    lastUsedAt: iso(row.lastUsedAt),
    expiresAt: iso(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    createdAt: iso(row.createdAt),
  };
}

/** `svc_sk_` plus 256 bits of entropy; only its SHA-256 is kept. */
export function generateApiKey(): { plaintext: string; keyHash: string; keyPrefix: string } {
  const plaintext = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { plaintext, keyHash: sha256Hex(plaintext), keyPrefix: plaintext.slice(0, KEY_PREFIX.length + 6) };
}

export function registerKeyRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

  app.post(
    '/keys',
    {
      config: { auth: 'session' },
      schema: {
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
      const { user } = principalOf(request);
      const now = deps.clock.now();
      const generated = generateApiKey();
      const row = await db.transaction(async (tx) => {
        // Serializes key creation per account so two concurrent requests cannot both take the tenth place.
        await tx.select({ id: users.id }).from(users).where(eq(users.id, user.id)).for('update');
        if ((await countActiveKeys(tx, user.id, now)) >= MAX_ACTIVE_KEYS) {
          throw new AppError(
            'key_limit_reached',
            `An account can hold ${MAX_ACTIVE_KEYS} active API keys. Revoke one first.`,
          );
        }
        const expiresInDays = request.body.expiresInDays;
        const [inserted] = await tx
          .insert(apiKeys)
          .values({
            id: newId(),
            userId: user.id,
            name: request.body.name,
            keyHash: generated.keyHash,
            keyPrefix: generated.keyPrefix,
            expiresAt: expiresInDays ? new Date(now.getTime() + expiresInDays * DAY_MS) : null,
            createdAt: now,
          })
          .returning();
        return inserted as ApiKeyRow;
      });
      return reply.code(201).send(ok({ key: toApiKey(row), plaintext: generated.plaintext }));
    },
  );

  app.get(
    '/keys',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['API keys'],
        summary: 'List API keys (metadata only)',
        response: responses({ 200: Type.Object({ keys: Type.Array(ApiKey) }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      return ok({ keys: (await listKeys(db, user.id)).map(toApiKey) });
    },
  );

  app.delete(
    '/keys/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['API keys'],
        summary: 'Revoke an API key',
        description: 'Immediate and idempotent: a repeat returns the same revoked key.',
        params: IdParam,
        response: responses({ 200: Type.Object({ key: ApiKey }) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const existing = await findKey(db, user.id, request.params.id);
      if (!existing) throw new AppError('not_found', 'No such API key.');
      if (existing.revokedAt) return ok({ key: toApiKey(existing) });
      forgetCredential(existing.id);
      const [revoked] = await db
        .update(apiKeys)
        .set({ revokedAt: deps.clock.now() })
        .where(eq(apiKeys.id, existing.id))
        .returning();
      return ok({ key: toApiKey(revoked ?? existing) });
    },
  );
}
