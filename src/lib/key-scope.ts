/**
 * What a credential may do within its account (issue 29). A browser session, and an API key created without a
 * scope, may do everything; a scoped API key may be read-only, bound to some of the account's wallets, and limited
 * in what it sends over any 24 hours. The auth hook puts the scope on the principal; services take it as a value.
 */

export const KEY_PERMISSIONS = ['full', 'read_only'] as const;
export type KeyPermissions = (typeof KEY_PERMISSIONS)[number];

/** The only period a spend limit has: a rolling 24 hours. */
export const SPEND_LIMIT_PERIOD = '24h';
export const SPEND_LIMIT_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface Scope {
  /** The API key behind the request (null: a session): what it creates is recorded against it. */
  keyId: string | null;
  permissions: KeyPermissions;
  /** The wallets the credential sees and acts on; null: every wallet of the account. */
  walletIds: readonly string[] | null;
  /** Base units the key may send (transfers and letters) in any 24 hours; null: no limit. */
  spendLimit: bigint | null;
}

/** A browser session's scope: the whole account, never limited by the account's keys. */
export const SESSION_SCOPE: Scope = Object.freeze({
  keyId: null,
  permissions: 'full',
  walletIds: null,
  spendLimit: null,
});

/** Whether the credential may see and act on this wallet of its account. */
export function inScope(scope: Pick<Scope, 'walletIds'>, walletId: string): boolean {
  return scope.walletIds === null || scope.walletIds.includes(walletId);
}
