/**
 * The authorization matrix, generated from the route table: every operation of the OpenAPI document (whose
 * `security` comes from each route's declared `config.auth`, which `buildApp` requires) × every kind of credential,
 * checked against the interface's Authentication section; and every id a route takes, replaced by another
 * account's. A new route is covered here the moment it is registered.
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAuth } from '../../src/http/auth.ts';
import { runAccountsCommand } from '../../src/modules/accounts/accounts.cli.ts';
import { resolveSession } from '../../src/modules/accounts/accounts.service.ts';
import { resolveApiKey } from '../../src/modules/keys/keys.service.ts';
import { apiOf } from '../api.ts';
import { apiKeyOf, type Caller, PASSWORD, sessionCookieOf, signup, type TestContext } from '../harness.ts';
import { type Holder, holdersFixture, keepSignedIn, SWEEP_SECRET, scopedKeysOf } from './fixture.ts';
import {
  API,
  AUTH_CODES,
  type AuthMode,
  fetchOperations,
  ID_FIELDS,
  type Known,
  notFoundCodeOf,
  type Operation,
  plausibleRequest,
  problemsOf,
  type ResourceKind,
  resourceOfPathId,
} from './openapi.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let owner: Holder;
let other: Holder;
let operations: Operation[];
let revokedKeyId: string;
/** A key of the owner's bound to a second wallet of the owner: the fixture's wallet is outside its scope. */
let outsider: Record<string, string>;

/** Credentials of every kind the interface names, built once. */
const credentials: Record<string, Record<string, string>> = {};

type Credential =
  | 'nothing'
  | 'session'
  | 'api key'
  | 'api key and session'
  | 'read-only key'
  | 'bound key'
  | 'limited key'
  | 'revoked key'
  | 'revoked key and session'
  | 'expired key'
  | 'malformed key: short'
  | 'malformed key: no prefix'
  | 'malformed key: basic scheme'
  | 'malformed key: empty bearer'
  | 'disabled account session'
  | 'disabled account key'
  | 'unknown session'
  | 'session of an older token version'
  | 'expired session'
  | 'operator secret'
  | 'wrong operator secret';

type Expectation = { status: number; code: string } | 'accepted';

/**
 * The interface's Authentication section as a table: what each credential gets on a route of each mode; and the
 * supplement's key scopes: a read-only key is refused every write and a letter's PDF (it carries the claim code), a
 * key bound to the owner's wallet the creation of a wallet (the plausible requests name that wallet and send 1 unit,
 * within the limited key's limit, whose allowance then still covers the fixture's letter of 1).
 */
function expectation(operation: Operation, credential: Credential): Expectation {
  const { auth } = operation;
  if (auth === 'none') return 'accepted';
  if (auth === 'operator') {
    return credential === 'operator secret' ? 'accepted' : { status: 401, code: 'unauthenticated' };
  }
  switch (credential) {
    case 'nothing':
    case 'operator secret':
    case 'wrong operator secret':
      return { status: 401, code: 'unauthenticated' };
    case 'session':
      return 'accepted';
    case 'api key':
    case 'api key and session': // the key takes precedence over the cookie
    case 'limited key':
      return auth === 'session' ? { status: 403, code: 'session_required' } : 'accepted';
    case 'read-only key':
      if (auth === 'session') return { status: 403, code: 'session_required' };
      // The PDF prints the claim code, which a key that may send nothing does not read (issue 36).
      if (operation.name === 'GET /transfer/letter/{id}/pdf')
        return { status: 403, code: 'insufficient_scope' };
      return operation.method === 'GET' ? 'accepted' : { status: 403, code: 'insufficient_scope' };
    case 'bound key':
      if (auth === 'session') return { status: 403, code: 'session_required' };
      return operation.name === 'POST /wallets' ? { status: 403, code: 'insufficient_scope' } : 'accepted';
    case 'revoked key':
    case 'revoked key and session':
    case 'expired key':
    case 'malformed key: short':
    case 'malformed key: no prefix':
    case 'malformed key: basic scheme':
    case 'malformed key: empty bearer':
      return { status: 401, code: 'invalid_api_key' };
    case 'disabled account session':
    case 'disabled account key':
      return { status: 403, code: 'account_disabled' };
    case 'unknown session':
    case 'session of an older token version':
    case 'expired session':
      return { status: 401, code: 'session_expired' };
  }
}

const LIVE_CREDENTIALS: Credential[] = [
  'nothing',
  'session',
  'api key',
  'api key and session',
  'read-only key',
  'bound key',
  'limited key',
  'revoked key',
  'revoked key and session',
  'malformed key: short',
  'malformed key: no prefix',
  'malformed key: basic scheme',
  'malformed key: empty bearer',
  'disabled account session',
  'disabled account key',
  'unknown session',
  'session of an older token version',
  'operator secret',
  'wrong operator secret',
];
/** Checked last, after the clock has moved past the session's 24 hours and the key's one day. */
const EXPIRED_CREDENTIALS: Credential[] = ['expired key', 'expired session'];

/** The owner's ids by kind. The key is one already revoked: a plausible `DELETE /keys/{id}` repeats its success. */
function ownId(kind: ResourceKind): string {
  switch (kind) {
    case 'wallet':
      return owner.wallet.id;
    case 'key':
      return revokedKeyId;
    case 'transaction':
      return owner.transactionId;
    case 'letter':
      return owner.letter.id;
    case 'webhook':
      return owner.webhookId;
    case 'passkey':
      return owner.passkeyId;
  }
}

function idsOf(holder: Holder): Record<ResourceKind, string> {
  return {
    wallet: holder.wallet.id,
    key: holder.key.id,
    transaction: holder.transactionId,
    letter: holder.letter.id,
    webhook: holder.webhookId,
    passkey: holder.passkeyId,
  };
}

/** What a careful client of the owner would send, with `overrides` in place of some fields. */
async function requestFor(operation: Operation, overrides: Record<string, string> = {}) {
  const pathIds: Record<string, string> = {};
  for (const match of operation.path.matchAll(/\{(\w+)\}/g)) {
    const name = match[1] as string;
    pathIds[name] = overrides[`path:${name}`] ?? ownId(resourceOfPathId(operation.path));
  }
  const known: Known = {
    fields: {
      walletId: overrides.walletId ?? owner.wallet.id,
      // A list of ids: only where a case names one (a key left unbound otherwise).
      ...(overrides.walletIds ? { walletIds: [overrides.walletIds] } : {}),
      // The owner's own letter (400 cannot_claim_own_letter): a claim would make the owner see the letter.
      claimCode: owner.letter.claimCode,
      // Never the real password: a plausible password change must not lock the owner out.
      currentPassword: 'Not-The-Password-1',
      'x-sweep-secret': SWEEP_SECRET,
    },
  };
  return plausibleRequest(operation, known, pathIds);
}

/**
 * Sends a request built from the document (method and path are the document's, read at run time: sent raw) with
 * `credential`, and reads the answer: its status, code, what differs from the document, and whether a budget was spent.
 */
async function answerTo(
  operation: Operation,
  credential: Record<string, string>,
  request: {
    url: string;
    body: unknown;
    headers: Record<string, string>;
  },
) {
  // The credential under test decides the operator secret too: the plausible one is only for the sweep's positive case.
  const { 'x-sweep-secret': _secret, ...headers } = request.headers;
  if (!request.url.startsWith(`${API}/`)) throw new Error(`not under ${API}: ${request.url}`);
  const response = await api.raw(operation.method, request.url.slice(API.length), {
    headers: { ...headers, ...credential },
    payload: request.body,
  });
  const problems = problemsOf(
    { status: response.statusCode, headers: response.headers, text: response.body },
    {
      flat: operation.flat,
      request: `${request.url} ${JSON.stringify(request.body)}`,
      url: request.url,
      documented: operation.documentedErrors,
    },
  );
  const json = /^application\/json/.test(String(response.headers['content-type'])) && !operation.flat;
  const code = json ? (response.json() as { error?: { code?: string } }).error?.code : undefined;
  const budgeted = response.headers['ratelimit-limit'] !== undefined;
  return { status: response.statusCode, code, body: response.body, problems, budgeted };
}

/** One line per way the answer differs from what is expected (none when it is right). */
function failuresOf(
  where: string,
  answer: Awaited<ReturnType<typeof answerTo>>,
  expected: Expectation,
): string[] {
  const failures = answer.problems.map((problem) => `${where}: ${problem}`);
  const got = `${answer.status} ${answer.body.slice(0, 160)}`;
  if (expected === 'accepted') {
    if (answer.status >= 500 || AUTH_CODES.has(answer.code ?? ''))
      failures.push(`${where}: refused (${got})`);
  } else if (answer.status !== expected.status || answer.code !== expected.code) {
    failures.push(`${where}: expected ${expected.status} ${expected.code}, got ${got}`);
  } else if (expected.status === 403 && !answer.budgeted) {
    // A refusal of a known principal spends its budget like the request would have (issue 25).
    failures.push(`${where}: 403 without the RateLimit-* headers of the budget it spent`);
  }
  return failures;
}

/** After a call that may end the owner's session or key (logout, a revocation), the fixture gets fresh ones. */
async function keepOwnerSignedIn(): Promise<void> {
  await keepSignedIn(ctx, owner);
  credentials.session = owner.caller.headers;
  credentials['api key'] = owner.key.headers;
  credentials['api key and session'] = { ...owner.key.headers, ...owner.caller.headers };
}

async function checkCell(operation: Operation, credential: Credential): Promise<string[]> {
  const expected = expectation(operation, credential);
  const request = await requestFor(operation);
  const headers =
    credential === 'operator secret' ? { 'x-sweep-secret': SWEEP_SECRET } : (credentials[credential] ?? {});
  const answer = await answerTo(operation, headers, request);
  if (expected === 'accepted') await keepOwnerSignedIn();
  return failuresOf(`${operation.name} with ${credential}`, answer, expected);
}

beforeAll(async () => {
  ({ ctx, owner, other } = await holdersFixture());
  operations = await fetchOperations(async (url) => {
    const response = await ctx.app.inject({ url });
    return { status: response.statusCode, body: response.json() };
  });

  const revoked = await apiKeyOf(ctx.app, owner.caller, { name: 'revoked' });
  const revocation = await api.delete('/keys/{id}', {
    params: { id: revoked.key.id },
    headers: owner.caller.headers,
  });
  expect(revocation.statusCode).toBe(200);
  revokedKeyId = revoked.key.id;
  const expiring = await apiKeyOf(ctx.app, owner.caller, { name: 'expiring', expiresInDays: 1 });

  const scoped = await scopedKeysOf(ctx, owner);
  const second = await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: owner.caller.headers });
  expect(second.statusCode).toBe(201);
  outsider = (
    await apiKeyOf(ctx.app, owner.caller, { name: 'outsider', walletIds: [second.json().data.wallet.id] })
  ).headers;

  const disabled = await signup(ctx.app);
  const disabledKey = await apiKeyOf(ctx.app, disabled, { name: 'disabled' });
  await runAccountsCommand(ctx.deps, 'disable', { email: disabled.email });

  // A session left behind by a password change (the token version moved on).
  const changer: Caller = await signup(ctx.app);
  const left = await api.post('/auth/login', { body: { email: changer.email, password: changer.password } });
  const leftBehind = sessionCookieOf(left.headers['set-cookie']);
  const change = await api.post('/me/password', {
    body: { currentPassword: PASSWORD, newPassword: 'Changed-Horse-10' },
    headers: changer.headers,
  });
  expect(change.statusCode).toBe(200);

  // A second session of the owner, for the expiry phase (the fixture's own may be replaced on the way).
  const secondSession = await api.post('/auth/login', {
    body: { email: owner.caller.email, password: owner.caller.password },
  });

  Object.assign(credentials, {
    nothing: {},
    session: owner.caller.headers,
    'api key': owner.key.headers,
    'api key and session': { ...owner.key.headers, ...owner.caller.headers },
    'read-only key': scoped.readOnly,
    'bound key': scoped.bound,
    'limited key': scoped.limited,
    'revoked key': revoked.headers,
    'revoked key and session': { ...revoked.headers, ...owner.caller.headers },
    'expired key': expiring.headers,
    'malformed key: short': { authorization: 'Bearer svc_sk_short' },
    'malformed key: no prefix': { authorization: `Bearer ${'a'.repeat(43)}` },
    'malformed key: basic scheme': { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` },
    'malformed key: empty bearer': { authorization: 'Bearer ' },
    'disabled account session': disabled.headers,
    'disabled account key': disabledKey.headers,
    'unknown session': { cookie: 'svc_session=not-a-session-token' },
    'session of an older token version': { cookie: leftBehind },
    'expired session': { cookie: sessionCookieOf(secondSession.headers['set-cookie']) },
    'wrong operator secret': { 'x-sweep-secret': 'not-the-operator-secret' },
  } satisfies Partial<Record<Credential, Record<string, string>>>);
}, 180_000);
afterAll(() => ctx?.close());

/**
 * The auth column of the interface's endpoint index and of the supplement's tables, for every route they name: the
 * matrix checks behaviour against each route's declaration, and this checks each declaration against the interface.
 */
const INTERFACE_AUTH: Readonly<Record<string, AuthMode>> = {
  'GET /sandbox': 'none',
  'POST /sandbox': 'none',
  'POST /auth/signup': 'none',
  'POST /auth/login': 'none',
  'POST /auth/login/totp': 'none',
  'POST /auth/passkey/options': 'none',
  'POST /auth/passkey/login': 'none',
  'POST /auth/logout': 'session',
  'GET /auth/session': 'either',
  'GET /me': 'either',
  'PATCH /me': 'either',
  'POST /me/password': 'session',
  'POST /me/totp/setup': 'session',
  'POST /me/totp/enable': 'session',
  'POST /me/totp/disable': 'session',
  'GET /me/passkeys': 'either',
  'POST /me/passkeys/options': 'session',
  'POST /me/passkeys/register': 'session',
  // Issue 17: the interface is silent; credential changes are session only, as for keys and TOTP.
  'PATCH /me/passkeys/{id}': 'session',
  'DELETE /me/passkeys/{id}': 'session',
  'POST /me/totp/recovery-codes': 'session',
  'POST /auth/password/forgot': 'none',
  'POST /auth/password/reset': 'none',
  'GET /sandbox/mailbox': 'none',
  'GET /sandbox/clock': 'operator',
  'POST /sandbox/clock': 'operator',
  'POST /keys': 'session',
  'GET /keys': 'either',
  'DELETE /keys/{id}': 'session',
  'GET /network': 'none',
  'POST /wallets': 'either',
  'GET /wallets': 'either',
  'GET /wallets/{id}': 'either',
  'POST /wallets/{id}/primary': 'either',
  'POST /wallets/{id}/export': 'session',
  'POST /wallets/import': 'session',
  'GET /balances': 'either',
  'GET /gas': 'either',
  // "A leaked API key can therefore move funds": the money routes take either credential.
  'POST /fund': 'either',
  'POST /mint': 'either',
  'POST /transfer': 'either',
  'POST /redeem': 'either',
  'GET /transactions': 'either',
  'GET /transactions/{id}': 'either',
  'GET /transactions/{id}/nota': 'either',
  'GET /notas/keys': 'none',
  'POST /notas/verify': 'either',
  'POST /transfer/letter': 'either',
  'GET /transfer/letter': 'either',
  'GET /transfer/letter/preview': 'none',
  'POST /transfer/letter/claim': 'either',
  // Issue 16: the claimant reads their own claim back on the claim page.
  'GET /transfer/letter/claim': 'either',
  'POST /transfer/letter/sweep': 'operator',
  'GET /transfer/letter/{id}': 'either',
  'GET /transfer/letter/{id}/pdf': 'either',
  'POST /transfer/letter/{id}/mail': 'either',
  'POST /transfer/letter/{id}/void': 'either',
  // Webhooks (issue 14): managing endpoints and their secrets takes a session; reading and testing take either.
  'POST /webhooks': 'session',
  'GET /webhooks': 'either',
  'GET /webhooks/{id}': 'either',
  'PATCH /webhooks/{id}': 'session',
  'DELETE /webhooks/{id}': 'session',
  'POST /webhooks/{id}/rotate-secret': 'session',
  'POST /webhooks/{id}/test': 'either',
  'GET /webhooks/{id}/deliveries': 'either',
  'POST /webhooks/{id}/deliveries/{deliveryId}/replay': 'session',
};

describe('the route table', () => {
  it('is read from the service: every documented operation with its declared auth', () => {
    expect(operations.length).toBeGreaterThanOrEqual(40);
    const modes = new Set(operations.map((operation) => operation.auth));
    expect(modes).toEqual(new Set(['none', 'either', 'session', 'operator']));
    // A few anchors of the interface's index, so a broken reading of the document cannot pass as an empty matrix.
    const auth = (name: string) => operations.find((operation) => operation.name === name)?.auth;
    expect(auth('POST /keys')).toBe('session');
    expect(auth('GET /keys')).toBe('either');
    expect(auth('POST /wallets/{id}/export')).toBe('session');
    expect(auth('GET /sandbox')).toBe('none');
    expect(auth('POST /transfer/letter/sweep')).toBe('operator');
  });

  it("declares each route's auth as the interface gives it", () => {
    const declared = Object.fromEntries(operations.map((operation) => [operation.name, operation.auth]));
    for (const name of Object.keys(declared)) {
      expect(
        INTERFACE_AUTH[name],
        `${name}: add the interface's auth for it to INTERFACE_AUTH`,
      ).toBeDefined();
    }
    expect(declared).toEqual(INTERFACE_AUTH);
  });

  it('has no route without a declared auth: the auth hook refuses to register one', async () => {
    const bare = Fastify({ logger: false });
    installAuth(bare, ctx.deps, { apiKey: resolveApiKey, session: resolveSession });
    expect(() => bare.get('/undeclared', async () => ({}))).toThrow(/declares no config\.auth/);
    expect(() => bare.get('/declared', { config: { auth: 'none' } }, async () => ({}))).not.toThrow();
    await bare.close();
  });
});

describe('every route × every credential', () => {
  it('answers as the interface says, with live credentials', async () => {
    const failures: string[] = [];
    for (const operation of operations) {
      for (const credential of LIVE_CREDENTIALS) failures.push(...(await checkCell(operation, credential)));
    }
    expect(failures).toEqual([]);
  }, 240_000);

  it("answers another account's ids as not found, and leaves that account's things alone", async () => {
    let checked = 0;
    const failures: string[] = [];
    const foreign = idsOf(other);
    const othersLetter = async () =>
      (
        await api.get('/transfer/letter/{id}', {
          params: { id: other.letter.id },
          headers: other.key.headers,
        })
      ).json().data.letter;
    const letterBefore = await othersLetter();
    for (const operation of operations) {
      if (operation.auth === 'none' || operation.auth === 'operator') continue;
      const targets: Array<{ override: Record<string, string>; kind: ResourceKind; where: string }> = [];
      for (const match of operation.path.matchAll(/\{(\w+)\}/g)) {
        const kind = resourceOfPathId(operation.path);
        targets.push({
          override: { [`path:${match[1]}`]: foreign[kind] },
          kind,
          where: `path {${match[1]}}`,
        });
      }
      const fields = [
        ...operation.parameters
          .filter((parameter) => parameter.in === 'query')
          .map((parameter) => parameter.name),
        ...Object.keys(operation.body?.properties ?? {}),
      ];
      for (const field of fields) {
        const kind = ID_FIELDS[field];
        if (kind) targets.push({ override: { [field]: foreign[kind] }, kind, where: field });
      }
      for (const target of targets) {
        const request = await requestFor(operation, target.override);
        const answer = await answerTo(operation, owner.caller.headers, request);
        const expected = { status: 404, code: notFoundCodeOf(target.kind) };
        failures.push(
          ...failuresOf(`${operation.name} with another account's ${target.where}`, answer, expected),
        );
        checked += 1;
        await keepOwnerSignedIn();
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(15);
    // Nothing of the other account moved: its key works, its letter is as it was, its wallet still primary.
    const letterAfter = await othersLetter();
    expect({ status: letterAfter.status, mail: letterAfter.mail, refund: letterAfter.refund }).toEqual({
      status: letterBefore.status,
      mail: letterBefore.mail,
      refund: letterBefore.refund,
    });
    const wallet = await api.get('/wallets/{id}', {
      params: { id: other.wallet.id },
      headers: other.key.headers,
    });
    expect(wallet.json().data.wallet.isPrimary).toBe(true);
  }, 120_000);

  it("answers the owner's wallet outside a bound key's scope, its transactions and letters, as another account's", async () => {
    let checked = 0;
    const failures: string[] = [];
    const ownLetter = async () =>
      (
        await api.get('/transfer/letter/{id}', {
          params: { id: owner.letter.id },
          headers: owner.caller.headers,
        })
      ).json().data.letter;
    const letterBefore = await ownLetter();
    for (const operation of operations) {
      if (operation.auth !== 'either') continue;
      const named: ResourceKind[] = [...operation.path.matchAll(/\{(\w+)\}/g)].map(() =>
        resourceOfPathId(operation.path),
      );
      for (const parameter of operation.parameters) {
        const kind = parameter.in === 'query' ? ID_FIELDS[parameter.name] : undefined;
        if (kind) named.push(kind);
      }
      for (const field of Object.keys(operation.body?.properties ?? {})) {
        const kind = ID_FIELDS[field];
        if (kind) named.push(kind);
      }
      // A wallet, and what belongs to one: its transactions and its letters (webhooks and keys belong to the account).
      const scoped = named.find((kind) => kind === 'wallet' || kind === 'transaction' || kind === 'letter');
      if (!scoped) continue;
      // The plausible request names the owner's wallet, transaction and letter: all outside the outsider's wallet.
      const answer = await answerTo(operation, outsider, await requestFor(operation));
      const expected = { status: 404, code: notFoundCodeOf(scoped) };
      failures.push(...failuresOf(`${operation.name} with a key bound to another wallet`, answer, expected));
      checked += 1;
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(15);
    const letterAfter = await ownLetter();
    expect({ status: letterAfter.status, refund: letterAfter.refund }).toEqual({
      status: letterBefore.status,
      refund: letterBefore.refund,
    });
  }, 120_000);

  it('answers as the interface says once the session and the key have expired', async () => {
    ctx.clock.advance(2 * 24 * 60 * 60 * 1000);
    const failures: string[] = [];
    for (const operation of operations) {
      for (const credential of EXPIRED_CREDENTIALS)
        failures.push(...(await checkCell(operation, credential)));
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
