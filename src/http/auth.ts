import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { AppError, missingSetting } from '../lib/errors.ts';
import { constantTimeEqual, sha256Hex } from '../lib/secrets.ts';
import { findLiveSession, type UserRow } from '../modules/accounts/accounts.repository.ts';
import { findKeyByHash, touchKey } from '../modules/keys/keys.repository.ts';
import { type CachedCredential, cacheCredential, cachedCredential } from './credential-cache.ts';
import { consume, type Limit } from './rate-limit.ts';

export const SESSION_COOKIE = 'svc_session';
export const API_KEY_PATTERN = /^svc_sk_[A-Za-z0-9_-]{43}$/;

/**
 * `none`: public; `either`: API key or session; `session`: a browser session only; `operator`: the operator's shared
 * secret in `X-Sweep-Secret` (SWEEP_SECRET), which no user credential replaces.
 */
export type AuthMode = 'none' | 'either' | 'session' | 'operator';
/** Which budget a route spends: the general read or write budget, its own, or none. */
export type RateClass = 'read' | 'write' | 'claim' | 'own' | 'none';

export interface Principal {
  kind: 'session' | 'api_key';
  id: string;
  userId: string;
  expiresAt: Date | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    rate?: RateClass;
    /** Sandbox probes answer errors flat: `{ok: false, error: string}`. */
    flat?: boolean;
    /** The body is any valid JSON, echoed and never stored: strings are not held to the text rules. */
    anyJson?: boolean;
    /** The code a malformed or unknown path id answers (`letter_not_found` on letter routes); `not_found` else. */
    notFound?: 'not_found' | 'letter_not_found';
    /** The whole body is optional: no body, an empty body and `{}` are the same request. */
    optionalBody?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    user: UserRow | null;
  }
}

// lastUsedAt is written at most this often per key, so a hot key does not turn every read into a write.
const TOUCH_INTERVAL_MS = 30_000;

async function resolveApiKey(deps: Deps, key: string, now: Date): Promise<CachedCredential> {
  const hash = sha256Hex(key);
  const useCache = deps.database.kind === 'pglite';
  let credential = useCache ? cachedCredential(hash) : undefined;
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
    if (useCache) cacheCredential(hash, credential);
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

async function resolveSession(deps: Deps, token: string, now: Date): Promise<CachedCredential> {
  const hash = sha256Hex(token);
  const useCache = deps.database.kind === 'pglite';
  let credential = useCache ? cachedCredential(hash) : undefined;
  if (!credential) {
    const found = await findLiveSession(deps.database.db, token, now);
    if (!found) throw new AppError('session_expired', 'The session has expired. Log in again.');
    credential = {
      kind: 'session',
      id: found.session.id,
      user: found.user,
      expiresAt: found.session.expiresAt,
      lastUsedAt: null,
      tokenVersion: found.session.tokenVersion,
    };
    if (useCache) cacheCredential(hash, credential);
  }
  if (
    (credential.expiresAt && credential.expiresAt <= now) ||
    credential.tokenVersion !== credential.user.tokenVersion
  ) {
    throw new AppError('session_expired', 'The session has expired. Log in again.');
  }
  return credential;
}

async function authenticate(
  deps: Deps,
  request: FastifyRequest,
): Promise<{ principal: Principal; user: UserRow }> {
  const now = deps.clock.now();
  const authorization = request.headers.authorization;
  let credential: CachedCredential;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) {
      throw new AppError('invalid_api_key', 'The API key is malformed.');
    }
    credential = await resolveApiKey(deps, key, now);
  } else {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) throw new AppError('unauthenticated', 'Authentication required: an API key or a session.');
    credential = await resolveSession(deps, token, now);
  }
  return {
    principal: {
      kind: credential.kind,
      id: credential.id,
      userId: credential.user.id,
      expiresAt: credential.expiresAt,
    },
    user: credential.user,
  };
}

/** An operator route: 503 naming SWEEP_SECRET while it is unset, else 401 without the secret. */
function assertOperatorSecret(deps: Deps, request: FastifyRequest): void {
  const secret = deps.config.sweepSecret;
  if (!secret) throw missingSetting('SWEEP_SECRET');
  const given = request.headers['x-sweep-secret'];
  if (typeof given !== 'string' || !constantTimeEqual(given, secret)) {
    throw new AppError('unauthenticated', 'This operator route needs the operator secret in X-Sweep-Secret.');
  }
}

/** The principal of an authenticated route; routes with `auth: 'none'` must not call it. */
export function principalOf(request: FastifyRequest): { principal: Principal; user: UserRow } {
  if (!request.principal || !request.user) throw new AppError('unauthenticated', 'Authentication required.');
  return { principal: request.principal, user: request.user };
}

export function limitFor(deps: Deps, rate: 'read' | 'write' | 'claim'): Limit {
  const limits = deps.config.rateLimits;
  switch (rate) {
    case 'read':
      return { bucket: 'read', max: limits.readsPerMinute, windowMs: 60_000 };
    case 'write':
      return { bucket: 'write', max: limits.writesPerMinute, windowMs: 60_000 };
    case 'claim':
      return { bucket: 'claim', max: limits.claimAttemptsPer15Min, windowMs: 15 * 60_000 };
  }
}

/**
 * Authentication, then the principal's budget, before the body is even parsed. Who may call a route is declared on
 * the route (`config.auth`), never assumed: this hook, the OpenAPI document's security and the authorization
 * matrix test all read it, so a route registered after this without one is refused.
 */
export function installAuth(app: FastifyInstance, deps: Deps): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) {
      throw new Error(
        `${String(route.method)} ${route.url} declares no config.auth (none, either, session, operator)`,
      );
    }
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('user', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const config = request.routeOptions.config ?? {};
    const mode = config.auth ?? 'none';
    if (mode === 'operator') assertOperatorSecret(deps, request);
    else if (mode !== 'none') {
      const { principal, user } = await authenticate(deps, request);
      if (user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
      if (mode === 'session' && principal.kind !== 'session') {
        throw new AppError(
          'session_required',
          'This operation needs a browser session; API keys cannot do it.',
        );
      }
      request.principal = principal;
      request.user = user;
    }
    const rate = config.rate ?? (request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write');
    if (rate === 'none' || rate === 'own') return;
    const principal = request.principal;
    const subject = principal ? `${principal.kind}:${principal.id}` : `ip:${request.ip}`;
    const keyed = rate === 'claim' ? `${subject}|ip:${request.ip}` : subject;
    await consume(deps.rateLimits, reply, limitFor(deps, rate), keyed, deps.clock.now());
  });
}
