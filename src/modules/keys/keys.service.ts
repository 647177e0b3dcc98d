import { randomBytes } from 'node:crypto';
import type { ApiKeyRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import type { UserCredential } from '../../http/auth.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import type { KeyPermissions, Scope } from '../../lib/key-scope.ts';
import { parseAmount } from '../../lib/money.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { findUserById, lockUser } from '../accounts/accounts.repository.ts';
import { queueNotice } from '../notifications/notifications.service.ts';
import { listWallets } from '../wallets/wallets.repository.ts';
import {
  countActiveKeys,
  findKey,
  findKeyByHash,
  insertKey,
  listKeys,
  revokeKey,
  touchKey,
} from './keys.repository.ts';
import { spentLast24h } from './spend.service.ts';

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

export interface CreateApiKeyInput {
  name: string;
  expiresInDays?: number | undefined;
  permissions?: KeyPermissions | undefined;
  walletIds?: string[] | undefined;
  spendLimit?: { amount: string; period: '24h' } | undefined;
}

function invalidScope(path: string, message: string): AppError {
  return new AppError('validation_error', `The key's ${path} is invalid.`, { details: [{ path, message }] });
}

/** The spend limit in base units; the schema has checked its period. */
function parseSpendLimit(input: CreateApiKeyInput): bigint | null {
  if (!input.spendLimit) return null;
  if (input.permissions === 'read_only') {
    throw invalidScope('spendLimit', 'a read-only key sends nothing: it takes no spend limit');
  }
  try {
    return parseAmount(input.spendLimit.amount);
  } catch (error) {
    if (error instanceof AppError) throw invalidScope('spendLimit.amount', error.message);
    throw error;
  }
}

/** A new API key of the account, with its scope; the plaintext is returned here once and never stored. */
export async function createApiKey(
  deps: Deps,
  userId: string,
  input: CreateApiKeyInput,
): Promise<{ key: ApiKeyRow; plaintext: string }> {
  const now = deps.clock.now();
  const spendLimit = parseSpendLimit(input);
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
    if (input.walletIds) {
      // Wallets are never deleted or handed over: one of the account's now stays the account's.
      const own = new Set((await listWallets(tx, userId)).map((wallet) => wallet.id));
      if (!input.walletIds.every((id) => own.has(id))) throw new AppError('not_found', 'No such wallet.');
    }
    const inserted = await insertKey(tx, {
      id: newId(),
      userId,
      name: input.name,
      keyHash: generated.keyHash,
      keyPrefix: generated.keyPrefix,
      expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * DAY_MS) : null,
      permissions: input.permissions ?? 'full',
      walletIds: input.walletIds ?? null,
      spendLimit: spendLimit === null ? null : spendLimit.toString(),
      createdAt: now,
    });
    // A key moves money: its owner hears of every new one (sent only if the key is committed).
    const owner = await findUserById(tx, userId);
    if (owner) await queueNotice(deps, tx, owner, 'api_key_created', input.name);
    return inserted;
  });
  return { key, plaintext: generated.plaintext };
}

export interface KeyWithSpend {
  key: ApiKeyRow;
  /** Base units the key sent in the last 24 hours (counted for keys with a spend limit only). */
  spent: bigint;
}

/** Each key with what it sent in the last 24 hours, where it has a spend limit. */
async function withSpend(deps: Deps, keys: ApiKeyRow[]): Promise<KeyWithSpend[]> {
  const limited = keys.filter((key) => key.spendLimit !== null).map((key) => key.id);
  const spent = await spentLast24h(deps, limited, deps.clock.now());
  return keys.map((key) => ({ key, spent: spent.get(key.id) ?? 0n }));
}

/**
 * The account's keys as the caller may see them. A credential bound to some wallets sees only the keys bound within
 * them: any other names wallets outside its scope, or may spend from them.
 */
export async function listApiKeys(deps: Deps, userId: string, scope: Scope): Promise<KeyWithSpend[]> {
  const keys = await listKeys(deps.database.db, userId);
  const bound = scope.walletIds;
  const visible = bound ? keys.filter((key) => key.walletIds?.every((id) => bound.includes(id))) : keys;
  return withSpend(deps, visible);
}

/** Revokes one of the account's keys at once (idempotent: a revoked key is returned as it is). */
export async function revokeApiKey(deps: Deps, userId: string, id: string): Promise<KeyWithSpend> {
  const existing = await findKey(deps.database.db, userId, id);
  if (!existing) throw new AppError('not_found', 'No such API key.');
  let key = existing;
  if (!existing.revokedAt) {
    deps.credentialCache?.forgetCredential(existing.id);
    key = (await revokeKey(deps.database.db, existing.id, deps.clock.now())) ?? existing;
  }
  const [shown] = await withSpend(deps, [key]);
  return shown as KeyWithSpend;
}

/** What a key may do, as the auth hook puts it on the principal. */
function scopeOf(key: ApiKeyRow): Scope {
  return {
    keyId: key.id,
    permissions: key.permissions,
    walletIds: key.walletIds,
    spendLimit: key.spendLimit === null ? null : BigInt(key.spendLimit),
  };
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
      scope: scopeOf(found.key),
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
