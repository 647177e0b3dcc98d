import type { UserRow } from '../modules/accounts/accounts.repository.ts';

/**
 * Recently resolved credentials (API keys and session tokens, by their SHA-256), so a hot credential is not a
 * database join on every request. Used only on the embedded database, where one process owns the data and
 * every change to a user, a session or a key goes through it and evicts here; on PostgreSQL, where several API
 * processes share the data, every request reads the database and a revocation is immediate everywhere.
 */
export interface CachedCredential {
  kind: 'api_key' | 'session';
  id: string;
  user: UserRow;
  expiresAt: Date | null;
  /** API keys: when lastUsedAt was last written. */
  lastUsedAt: Date | null;
  /** Sessions: the token version the session was minted under. */
  tokenVersion: number | null;
}

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;
const entries = new Map<string, { value: CachedCredential; cachedAt: number }>();

export function cachedCredential(hash: string): CachedCredential | undefined {
  const entry = entries.get(hash);
  if (!entry) return undefined;
  if (Date.now() - entry.cachedAt > TTL_MS) {
    entries.delete(hash);
    return undefined;
  }
  return entry.value;
}

export function cacheCredential(hash: string, value: CachedCredential): void {
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(hash, { value, cachedAt: Date.now() });
}

/** Drops every cached credential of a user (profile, password, 2FA or status changed). */
export function forgetUser(userId: string): void {
  for (const [hash, entry] of entries) if (entry.value.user.id === userId) entries.delete(hash);
}

/** Drops one session or API key by its id (logout, revocation). */
export function forgetCredential(id: string): void {
  for (const [hash, entry] of entries) if (entry.value.id === id) entries.delete(hash);
}
