import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserRow } from '../db/schema/index.ts';
import type { Deps } from '../deps.ts';
import type { Credential } from '../lib/credential-cache.ts';
import { AppError, missingSetting } from '../lib/errors.ts';
import type { Scope } from '../lib/key-scope.ts';
import { consume, type Limit } from '../lib/rate-limit.ts';
import { constantTimeEqual } from '../lib/secrets.ts';
import { rateLimitHeaders } from './rate-limit.ts';

export const SESSION_COOKIE = 'svc_session';
export const API_KEY_PATTERN = /^svc_sk_[A-Za-z0-9_-]{43}$/;

/**
 * `none`: public; `either`: API key or session; `session`: a browser session only; `operator`: the operator's shared
 * secret in `X-Sweep-Secret` (SWEEP_SECRET), which no user credential replaces.
 */
export type AuthMode = 'none' | 'either' | 'session' | 'operator';
/** Which budget a route spends: the general read or write budget, its own, or none. */
export type RateClass = 'read' | 'write' | 'claim' | 'own' | 'none';

export type UserCredential = Credential<UserRow>;

/**
 * How a presented credential becomes an account: the keys module resolves API keys, the accounts module sessions
 * (src/app.ts wires them). Each refuses with its own 401 code; the HTTP layer knows no table.
 */
export interface CredentialResolvers {
  apiKey(deps: Deps, key: string, now: Date): Promise<UserCredential>;
  session(deps: Deps, token: string, now: Date): Promise<UserCredential>;
}

export interface Principal {
  kind: 'session' | 'api_key';
  id: string;
  userId: string;
  expiresAt: Date | null;
  /** What the credential may do in its account (src/lib/key-scope.ts): a session's is the whole account. */
  scope: Scope;
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

async function authenticate(
  deps: Deps,
  resolvers: CredentialResolvers,
  request: FastifyRequest,
): Promise<{ principal: Principal; user: UserRow }> {
  const now = deps.clock.now();
  const authorization = request.headers.authorization;
  let credential: UserCredential;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) {
      throw new AppError('invalid_api_key', 'The API key is malformed.');
    }
    credential = await resolvers.apiKey(deps, key, now);
  } else {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) throw new AppError('unauthenticated', 'Authentication required: an API key or a session.');
    credential = await resolvers.session(deps, token, now);
  }
  return {
    principal: {
      kind: credential.kind,
      id: credential.id,
      userId: credential.user.id,
      expiresAt: credential.expiresAt,
      scope: credential.scope,
    },
    user: credential.user,
  };
}

function assertOperatorSecret(deps: Deps, request: FastifyRequest): void {
  const secret = deps.config.sweepSecret;
  if (!secret) throw missingSetting('SWEEP_SECRET');
  const given = request.headers['x-sweep-secret'];
  if (typeof given !== 'string' || !constantTimeEqual(given, secret)) {
    throw new AppError('unauthenticated', 'This operator route needs the operator secret in X-Sweep-Secret.');
  }
}

/** A principal as one string, `api_key:<id>` or `session:<id>`: the subject of its budgets, the claimant of a claim. */
export function principalKey(principal: Pick<Principal, 'kind' | 'id'>): string {
  return `${principal.kind}:${principal.id}`;
}

/** The principal of an authenticated route; routes with `auth: 'none'` must not call it. */
export function principalOf(request: FastifyRequest): { principal: Principal; user: UserRow } {
  if (!request.principal || !request.user) throw new AppError('unauthenticated', 'Authentication required.');
  return { principal: request.principal, user: request.user };
}

/** The budget a request spends: the route's own class, else reads for GET and HEAD and writes for the rest. */
export function rateClassOf(method: string, rate: RateClass | undefined): RateClass {
  return rate ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'write');
}

/** Whether a request of this budget changes something: what a read-only API key may never do. */
export function isWrite(rate: RateClass): boolean {
  return rate === 'write' || rate === 'claim';
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
 * Authentication, then the principal's budget, then authorization, before the body is even parsed. Who may call a
 * route is declared on the route (`config.auth`), never assumed: this hook, the OpenAPI document's security and the
 * authorization matrix test all read it, so a route registered after this without one is refused.
 *
 * The budget is spent as soon as the principal is known, before any `403` (a disabled account, a key on a
 * session-only route, a key's scope): a refused write costs the principal's write budget like any write and its
 * answer carries the RateLimit-* headers, so a leaked key cannot probe what it may not do without limit. A 403
 * decided later, in a route or a service, comes after the budget all the same.
 */
export function installAuth(app: FastifyInstance, deps: Deps, resolvers: CredentialResolvers): void {
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
    const known =
      mode === 'either' || mode === 'session' ? await authenticate(deps, resolvers, request) : null;
    const rate = rateClassOf(request.method, config.rate);
    if (rate !== 'none' && rate !== 'own') {
      const principal = known?.principal;
      const subject = principal ? principalKey(principal) : `ip:${request.ip}`;
      const keyed = rate === 'claim' ? `${subject}|ip:${request.ip}` : subject;
      await consume(deps.rateLimits, rateLimitHeaders(reply), limitFor(deps, rate), keyed, deps.clock.now());
    }
    if (!known) return;
    // Authorization: every refusal from here on has been charged to the principal's budget above.
    if (known.user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
    if (mode === 'session' && known.principal.kind !== 'session') {
      throw new AppError(
        'session_required',
        'This operation needs a browser session; API keys cannot do it.',
      );
    }
    if (known.principal.scope.permissions === 'read_only' && isWrite(rate)) {
      throw new AppError('insufficient_scope', 'This API key is read-only: it cannot change anything.');
    }
    request.principal = known.principal;
    request.user = known.user;
  });
}
