import { randomBytes } from 'node:crypto';
import type { ApiKeyRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { UserCredential } from '../../http/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { findUserById, lockUser } from '../accounts/accounts.repository.ts';
import { queueNotice } from '../notifications/notifications.service.ts';
import {
  countActiveKeys,
  findKey,
  findKeyByHash,
  insertKey,
  revokeKey,
  touchKey,
} from './keys.repository.ts';

export const MAX_ACTIVE_KEYS = 10;
const KEY_PREFIX = 'svc_sk_';
const DAY_MS = 24 * 60 * 60 * 1000;
// lastUsedAt is written at most this often per key, so a hot key does not turn every read into a write.
const TOUCH_INTERVAL_MS = 30_000;

/** `svc_sk_` plus 256 bits of entropy; only its SHA-256 is kept. */
export function generateApiKey(): { plaintext: string; keyHash: string; keyPrefix: string } {
  const plaintext = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { plaintext, keyHash: sha256Hex(plaintext), keyPrefix: plaintext.slice(0, KEY_PREFIX.length + 6) };
}

/** A new API key of the account; the plaintext is returned here once and never stored. */
export async function createApiKey(
  deps: Deps,
  userId: string,
  input: { name: string; expiresInDays?: number | undefined },
): Promise<{ key: ApiKeyRow; plaintext: string }> {
  const now = deps.clock.now();
  const generated = generateApiKey();
  const key = await deps.database.db.transaction(async (tx) => {
    // Serializes key creation per account so two concurrent requests cannot both take the tenth place.
    await lockUser(tx, userId);
    if ((await countActiveKeys(tx, userId, now)) >= MAX_ACTIVE_KEYS) {
      throw new AppError(
        'key_limit_reached',
        `An account can hold ${MAX_ACTIVE_KEYS} active API keys. Revoke one first.`,
      );
    }
    const inserted = await insertKey(tx, {
      id: newId(),
      userId,
      name: input.name,
      keyHash: generated.keyHash,
      keyPrefix: generated.keyPrefix,
      expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * DAY_MS) : null,
      createdAt: now,
    });
    // A key moves money: its owner hears of every new one (sent only if the key is committed).
    const owner = await findUserById(tx, userId);
    if (owner) await queueNotice(deps, tx, owner, 'api_key_created', input.name);
    return inserted;
  });
  return { key, plaintext: generated.plaintext };
}

/** Revokes one of the account's keys at once (idempotent: a revoked key is returned as it is). */
export async function revokeApiKey(deps: Deps, userId: string, id: string): Promise<ApiKeyRow> {
  const existing = await findKey(deps.database.db, userId, id);
  if (!existing) throw new AppError('not_found', 'No such API key.');
  if (existing.revokedAt) return existing;
  deps.credentialCache?.forgetCredential(existing.id);
  return (await revokeKey(deps.database.db, existing.id, deps.clock.now())) ?? existing;
}

/** The account behind an API key, or `401 invalid_api_key` (unknown, revoked or expired). */
export async function resolveApiKey(deps: Deps, key: string, now: Date): Promise<UserCredential> {
  const hash = sha256Hex(key);
  const cache = deps.credentialCache;
  let credential = cache?.get(hash);
  if (!credential) {
    const found = await findKeyByHash(deps.database.db, hash);
    if (!found || found.key.revokedAt) throw new AppError('invalid_api_key', 'The API key is not valid.');
    credential = {
      kind: 'api_key',
      id: found.key.id,
      user: found.user,
      expiresAt: found.key.expiresAt,
      lastUsedAt: found.key.lastUsedAt,
      tokenVersion: null,
    };
    cache?.set(hash, credential);
  }
  if (credential.expiresAt && credential.expiresAt <= now) {
    throw new AppError('invalid_api_key', 'The API key has expired.');
  }
  if (!credential.lastUsedAt || now.getTime() - credential.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) {
    await touchKey(deps.database.db, credential.id, now);
    credential.lastUsedAt = now;
  }
  return credential;
}
