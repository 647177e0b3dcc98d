/**
 * Recently resolved credentials (API keys and session tokens, by their SHA-256), so a hot credential is not a
 * database join on every request. The composition root gives one to the embedded database only, where one process
 * owns the data and every change to a user, a session or a key goes through it and evicts here (the services
 * evict through `deps.credentialCache`); on PostgreSQL, where several API processes share the data, there is none:
 * every request reads the database and a revocation is immediate everywhere.
 */
import type { Scope } from './key-scope.ts';

export interface Credential<User extends { id: string }> {
  kind: 'api_key' | 'session';
  id: string;
  user: User;
  expiresAt: Date | null;
  /** API keys: when lastUsedAt was last written. */
  lastUsedAt: Date | null;
  /** Sessions: the token version the session was minted under. */
  tokenVersion: number | null;
  /** What the credential may do (a key's scope is fixed at its creation; a session's is the whole account). */
  scope: Scope;
}

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

export class CredentialCache<User extends { id: string }> {
  private readonly entries = new Map<string, { value: Credential<User>; cachedAt: number }>();

  get(hash: string): Credential<User> | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (Date.now() - entry.cachedAt > TTL_MS) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.value;
  }

  set(hash: string, value: Credential<User>): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { value, cachedAt: Date.now() });
  }

  /** Drops every cached credential of a user (profile, password, 2FA or status changed). */
  forgetUser(userId: string): void {
    for (const [hash, entry] of this.entries) if (entry.value.user.id === userId) this.entries.delete(hash);
  }

  /** Drops one session or API key by its id (logout, revocation). */
  forgetCredential(id: string): void {
    for (const [hash, entry] of this.entries) if (entry.value.id === id) this.entries.delete(hash);
  }
}
