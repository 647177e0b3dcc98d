/**
 * Accounts that own something, so requests get past authentication into the handlers: a session, an API key, a
 * funded custodial wallet with confidential funds, a transaction and an escrowed letter each. Shared by the fuzzer
 * and the authorization matrix (another account's ids come from the second holder).
 */

import { startWorker } from '../../src/worker/worker.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  sessionCookieOf,
  signup,
  type TestContext,
  type TestOptions,
  waitForStatus,
} from '../harness.ts';
import { cookieOf } from '../support/cookies.ts';
import { SoftwareAuthenticator } from '../support/webauthn.ts';

/** Budgets raised so a suite of thousands of requests is never answered 429 (the limiter still runs). */
export const UNLIMITED_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_READS_PER_MINUTE: '100000000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
  RATE_LIMIT_SIGNUPS_PER_HOUR: '100000000',
  RATE_LIMIT_LOGIN_PER_15_MINUTES: '100000000',
  RATE_LIMIT_CLAIMS_PER_15_MINUTES: '100000000',
  RATE_LIMIT_PREVIEWS_PER_MINUTE: '100000000',
  RATE_LIMIT_PASSWORD_RESETS_PER_HOUR: '100000000',
};

export const SWEEP_SECRET = 'hardening-sweep-secret';

export const RECIPIENT = {
  name: 'Ada Lovelace',
  address: {
    line1: '12 St James Square',
    city: 'London',
    region: 'London',
    postal: 'SW1Y 4JH',
    country: 'GB',
  },
};

export interface Holder {
  caller: Caller;
  key: { headers: Record<string, string>; plaintext: string; id: string };
  wallet: { id: string; address: string };
  letter: { id: string; claimCode: string };
  /** A FUND transaction of the wallet. */
  transactionId: string;
  /** A webhook endpoint of the account (never delivered to: the tests run no delivery loop). */
  webhookId: string;
  /** A passkey registered on a software authenticator. */
  passkeyId: string;
}

const quiet = { info: () => {}, warn: () => {}, error: (...args: unknown[]) => console.error(...args) };

async function post(ctx: TestContext, headers: Record<string, string>, url: string, payload: object) {
  const response = await ctx.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload });
  if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** One account with a key, a wallet funded and minted, and an escrowed letter (mailable: https claim origin). */
export async function holder(ctx: TestContext): Promise<Holder> {
  const caller = await signup(ctx.app);
  const key = await apiKeyOf(ctx.app, caller, { name: 'fixture' });
  const { wallet } = await post(ctx, caller.headers, '/wallets', { type: 'CUSTODIAL' });
  const { transaction: fund } = await post(ctx, caller.headers, '/fund', {
    walletId: wallet.id,
    amount: '100',
  });
  await waitForStatus(ctx.app, caller.headers, fund.id, ['CONFIRMED']);
  const { transaction: mint } = await post(ctx, caller.headers, '/mint', {
    walletId: wallet.id,
    amount: '50',
  });
  await waitForStatus(ctx.app, caller.headers, mint.id, ['CONFIRMED']);
  const { letter } = await post(ctx, caller.headers, '/transfer/letter', {
    walletId: wallet.id,
    amount: '1',
    memo: 'fixture letter',
    recipient: RECIPIENT,
    claimOrigin: 'https://claim.example.com',
  });
  const { endpoint } = await post(ctx, caller.headers, '/webhooks', { url: 'https://hooks.example.com/in' });
  const authenticator = new SoftwareAuthenticator(ctx.deps.config.publicOrigin);
  const creation = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/me/passkeys/options',
    headers: caller.headers,
  });
  const challenge = cookieOf(creation.headers['set-cookie'], 'svc_webauthn') as string;
  const { passkey } = await post(
    ctx,
    { cookie: `${caller.headers.cookie}; ${challenge}` },
    '/me/passkeys/register',
    {
      credential: authenticator.register(creation.json().data.options),
      deviceName: 'fixture',
    },
  );
  return {
    caller,
    passkeyId: passkey.id,
    key: { headers: key.headers, plaintext: key.plaintext, id: key.key.id },
    wallet: { id: wallet.id, address: wallet.address },
    letter: { id: letter.id, claimCode: letter.claimCode },
    transactionId: fund.id,
    webhookId: endpoint.id,
  };
}

/**
 * A test context on the embedded chain with two holders. The worker runs only while they are set up: what the
 * tests queue afterwards stays queued, so the chain does no work the tests do not ask for.
 */
export async function holdersFixture(options: TestOptions = {}): Promise<{
  ctx: TestContext;
  owner: Holder;
  other: Holder;
}> {
  const ctx = await createTestContext({
    ...options,
    network: true,
    env: { ...UNLIMITED_ENV, SWEEP_SECRET, ...options.env },
  });
  const stopWorker = await startWorker(ctx.deps, quiet);
  try {
    const [owner, other] = await Promise.all([holder(ctx), holder(ctx)]);
    return { ctx, owner, other };
  } finally {
    await stopWorker();
  }
}

/** The holder's scoped API keys (issue 29), as request headers. */
export interface ScopedKeys {
  /** `permissions: read_only`: every write is `403 insufficient_scope`. */
  readOnly: Record<string, string>;
  /** Bound to the holder's wallet (the fixture's requests name it): creating a wallet is `403 insufficient_scope`. */
  bound: Record<string, string>;
  /** A 10-unit daily spend limit: the plausible requests send 1 unit. */
  limited: Record<string, string>;
}

export async function scopedKeysOf(ctx: TestContext, holder: Holder): Promise<ScopedKeys> {
  const key = async (body: Record<string, unknown>) =>
    (await apiKeyOf(ctx.app, holder.caller, { name: 'scoped fixture', ...body })).headers;
  return {
    readOnly: await key({ permissions: 'read_only' }),
    bound: await key({ walletIds: [holder.wallet.id] }),
    limited: await key({ spendLimit: { amount: '10', period: '24h' } }),
  };
}

/**
 * After a request that may have ended the holder's session (a logout, a password change) or key (a revocation):
 * signs in again and mints a new key, so the next request is made with live credentials.
 */
export async function keepSignedIn(ctx: TestContext, holder: Holder): Promise<void> {
  const session = await ctx.app.inject({ url: '/api/v1/auth/session', headers: holder.caller.headers });
  if (session.statusCode !== 200) {
    const login = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: holder.caller.email, password: holder.caller.password },
    });
    holder.caller.headers = { cookie: sessionCookieOf(login.headers['set-cookie']) };
  }
  const key = await ctx.app.inject({ url: '/api/v1/auth/session', headers: holder.key.headers });
  if (key.statusCode !== 200) {
    const fresh = await apiKeyOf(ctx.app, holder.caller, { name: 'fixture again' });
    holder.key = { headers: fresh.headers, plaintext: fresh.plaintext, id: fresh.key.id };
  }
}
