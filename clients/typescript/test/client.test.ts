/**
 * `@sealpay/client` against the real service over real HTTP (the embedded chain, the worker): every method
 * round-trips, failures arrive as `SealpayError`, a real `429` is waited out for its `Retry-After`, and a money
 * movement whose answer was lost on a dropped connection is sent again with its Idempotency-Key and moves money once.
 */
import { createServer, type Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSING_PORT } from '../../../test/faults/service.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  listenOnLoopback,
  signup,
  type TestContext,
} from '../../../test/harness.ts';
import {
  createClient,
  isSealpayError,
  type SealpayClient,
  type SealpayError,
  spendLimitOf,
  type Transaction,
  type Wallet,
} from '../src/index.ts';

/** Polling sped up for tests; the default is the interface's 3 to 10 s. */
const FAST = { minIntervalMs: 100, maxIntervalMs: 250, timeoutMs: 60_000 };

let ctx: TestContext;
let origin: string;
let owner: Caller;
let client: SealpayClient;
let wallet: Wallet;

async function clientOf(caller: Caller, options: Partial<Parameters<typeof createClient>[0]> = {}) {
  const { plaintext } = await apiKeyOf(ctx.app, caller);
  return createClient({ baseUrl: `${origin}/api/v1`, apiKey: plaintext, ...options });
}

async function settled(sealpay: SealpayClient, transaction: Transaction) {
  const done = await sealpay.waitForTransaction(transaction.id, FAST);
  expect(done.errorCode).toBeNull();
  return done;
}

/** What an operation throws, which must be a SealpayError. */
async function failureOf(promise: Promise<unknown>): Promise<SealpayError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(isSealpayError(error)).toBe(true);
  return error as SealpayError;
}

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  origin = await listenOnLoopback(ctx.app);
  owner = await signup(ctx.app);
  client = await clientOf(owner);
  wallet = await client.wallets.create({ type: 'CUSTODIAL', label: 'main' });
  await settled(client, await client.fund({ walletId: wallet.id, amount: '100' }));
  await settled(client, await client.mint({ walletId: wallet.id, amount: '60' }));
}, 180_000);

afterAll(async () => {
  await ctx?.close();
});

describe('@sealpay/client round trips', () => {
  it('reads the account, the network, keys and session', async () => {
    expect((await client.me()).id).toBe(owner.userId);
    expect((await client.session()).principal.kind).toBe('api_key');
    expect((await client.network()).confidentiality).toBe('mock');
    expect((await client.apiKeys.list()).length).toBeGreaterThan(0);
    const probe = await client.request('get', '/sandbox');
    expect(probe).toMatchObject({ ok: true, version: 'v1' });
  });

  it('registers a webhook endpoint with a session, then lists, reads and tests it with the key', async () => {
    const withSession = createClient({ baseUrl: `${origin}/api/v1`, headers: owner.headers });
    const { endpoint, secret } = await withSession.webhooks.create({ url: 'https://hooks.example.com/in' });
    expect(secret).toMatch(/^whsec_/);
    expect((await client.webhooks.list()).map((item) => item.id)).toContain(endpoint.id);
    expect((await client.webhooks.get(endpoint.id)).url).toBe('https://hooks.example.com/in');
    const delivery = await client.webhooks.test(endpoint.id);
    expect(delivery).toMatchObject({ endpointId: endpoint.id, eventType: 'webhook.test', status: 'PENDING' });
    expect((await client.webhooks.deliveries(endpoint.id)).map((item) => item.id)).toContain(delivery.id);
    // Registering takes a session: an API key is refused.
    expect((await failureOf(client.webhooks.create({ url: 'https://hooks.example.com/x' }))).status).toBe(
      403,
    );
  });

  it('manages wallets and reads balances and gas', async () => {
    const second = await client.wallets.create({ type: 'CUSTODIAL', label: 'second' });
    expect((await client.wallets.list()).map((item) => item.id)).toEqual(
      expect.arrayContaining([wallet.id, second.id]),
    );
    expect((await client.wallets.get(second.id)).wallet.label).toBe('second');
    expect((await client.wallets.makePrimary(second.id)).isPrimary).toBe(true);
    await client.wallets.makePrimary(wallet.id);
    const [balance] = await client.wallets.balances(wallet.id);
    expect(balance?.confidential.amount).toBe('60.00');
    const [gas] = await client.wallets.gas(wallet.id);
    expect(gas?.normal.amount).toBe('40.00');
  });

  it('transfers, redeems, waits, pages and iterates transactions, and verifies a receipt', async () => {
    const to = (await client.wallets.create({ type: 'CUSTODIAL', label: 'payee' })).address;
    const transfer = await client.transfer({ walletId: wallet.id, to, amount: '5' });
    expect(transfer).toMatchObject({ status: 'QUEUED', txHash: null, type: 'TRANSFER' });
    expect((await settled(client, transfer)).status).toBe('CONFIRMED');
    const redeem = await client.redeem({ walletId: wallet.id, amount: '1' });
    expect((await settled(client, redeem)).status).toBe('SETTLED');
    expect((await client.transactions.get(transfer.id)).amount).toBe('5.00');

    const page = await client.transactions.page({ walletId: wallet.id, pageSize: 2 });
    expect(page.items).toHaveLength(2);
    const all: Transaction[] = [];
    for await (const transaction of client.transactions.list({ walletId: wallet.id })) all.push(transaction);
    expect(all).toHaveLength(page.total);
    expect(all.map((transaction) => transaction.id)).toEqual(
      expect.arrayContaining([transfer.id, redeem.id]),
    );

    const receipt = await client.transactions.receipt(transfer.id);
    expect(receipt.filename).toMatch(/\.nota$/);
    expect(await client.notas.verify(receipt.nota)).toMatchObject({ valid: true, kind: 'receipt' });
    expect((await client.notas.keys())[0]?.alg).toBe('Ed25519');
  });

  it('sends a letter, previews, downloads, mails and voids it, and another account claims one', async () => {
    const recipient = {
      name: 'Ada',
      address: { line1: '1 Main St', city: 'London', region: 'LDN', country: 'GB' },
    };
    const letter = await client.letters.create({ walletId: wallet.id, amount: '3', recipient });
    expect(letter.status).toBe('ESCROWED');
    expect((await client.letters.get(letter.id)).id).toBe(letter.id);
    expect((await client.letters.page({ pageSize: 1 })).items).toHaveLength(1);
    const listed: string[] = [];
    for await (const item of client.letters.list()) listed.push(item.id);
    expect(listed).toContain(letter.id);
    const pdf = await client.letters.pdf(letter.id);
    expect(pdf.type).toBe('application/pdf');
    expect(pdf.size).toBeGreaterThan(1000);

    const claimant = await clientOf(await signup(ctx.app));
    const into = await claimant.wallets.create({ type: 'CUSTODIAL' });
    expect((await claimant.letters.preview(letter.claimCode ?? '')).claimable).toBe(true);
    const claimed = await claimant.claimLetter({ claimCode: letter.claimCode ?? '', walletId: into.id });
    expect(claimed.letter).toMatchObject({ status: 'CLAIMED', amount: '3.00' });
    expect(claimed.transaction).toMatchObject({ type: 'LETTER_CLAIM', status: 'CONFIRMED' });

    const second = await client.letters.create({ walletId: wallet.id, amount: '2', recipient });
    const mailed = await client.letters
      .mail(second.id, { deliveryMethod: 'standard' })
      .catch((error: SealpayError) => error);
    // The test service's claim origin is http: the interface refuses to mail such a letter.
    expect(mailed).toMatchObject({ code: 'claim_origin_not_public', status: 400 });
    expect((await client.letters.void(second.id)).status).toBe('VOIDED');
  });
});

describe('@sealpay/client errors', () => {
  it('throws SealpayError with the code, status, details and request id of the envelope', async () => {
    const invalid = await failureOf(client.transfer({ walletId: wallet.id, to: 'nowhere', amount: '1' }));
    expect(invalid).toMatchObject({ code: 'invalid_recipient', status: 400, retryable: false });
    expect(invalid.requestId).toMatch(/^[0-9a-f-]{36}$/);

    const validation = await failureOf(client.request('patch', '/me', { body: {} }));
    expect(validation).toMatchObject({ code: 'validation_error', status: 400 });
    expect(Array.isArray(validation.details)).toBe(true);

    expect(await failureOf(client.transactions.get('nosuchtransaction0000000'))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    const anonymous = createClient({ baseUrl: `${origin}/api/v1` });
    expect(await failureOf(anonymous.me())).toMatchObject({ code: 'unauthenticated', status: 401 });
    const badKey = createClient({ baseUrl: `${origin}/api/v1`, apiKey: `svc_sk_${'x'.repeat(43)}` });
    expect(await failureOf(badKey.me())).toMatchObject({ code: 'invalid_api_key', status: 401 });
    // An API key cannot create keys (session only).
    expect(await failureOf(client.request('post', '/keys', { body: { name: 'x' } }))).toMatchObject({
      code: 'session_required',
      status: 403,
    });
  });

  it("reads a key's scope refusals: insufficient_scope, and spend_limit_exceeded with its figures", async () => {
    const scoped = async (body: Record<string, unknown>) =>
      createClient({
        baseUrl: `${origin}/api/v1`,
        apiKey: (await apiKeyOf(ctx.app, owner, { name: 'scoped', ...body })).plaintext,
      });
    const readOnly = await scoped({ permissions: 'read_only' });
    expect((await readOnly.wallets.list()).map((listed) => listed.id)).toContain(wallet.id);
    const refused = await failureOf(
      readOnly.transfer({ walletId: wallet.id, to: wallet.address, amount: '1' }),
    );
    expect(refused).toMatchObject({ code: 'insufficient_scope', status: 403, retryable: false });
    expect(spendLimitOf(refused)).toBeNull();

    const limited = await scoped({ spendLimit: { amount: '1.5', period: '24h' } });
    await limited.transfer({ walletId: wallet.id, to: wallet.address, amount: '1' });
    const over = await failureOf(limited.transfer({ walletId: wallet.id, to: wallet.address, amount: '1' }));
    expect(over).toMatchObject({ code: 'spend_limit_exceeded', status: 403, retryable: false });
    expect(spendLimitOf(over)).toMatchObject({ limit: '1.50', spent: '1.00', remaining: '0.50' });
    expect(Date.parse(spendLimitOf(over)?.resetsAt ?? '')).toBeGreaterThan(Date.now());
  });

  it('reports a service that cannot be reached as network_error (status 0, retryable)', async () => {
    const unreachable = createClient({
      baseUrl: `http://127.0.0.1:${REFUSING_PORT}/api/v1`,
      retry: { maxAttempts: 1 },
    });
    expect(await failureOf(unreachable.network())).toMatchObject({
      code: 'network_error',
      status: 0,
      retryable: true,
    });
  });
});

describe('@sealpay/client retries', () => {
  it("waits out a real 429's Retry-After, then succeeds", async () => {
    const limited = await createTestContext({ env: { RATE_LIMIT_READS_PER_MINUTE: '3' } });
    try {
      const limitedOrigin = await listenOnLoopback(limited.app);
      const caller = await signup(limited.app);
      const { plaintext } = await apiKeyOf(limited.app, caller);
      // Near the end of the rate-limit window, so the Retry-After is a couple of seconds, not a minute.
      const now = limited.clock.now().getTime();
      limited.clock.advance(60_000 - (now % 60_000) - 2_500);
      const seen: Array<{ at: number; status: number; retryAfter: string | null }> = [];
      const recording = createClient({
        baseUrl: `${limitedOrigin}/api/v1`,
        apiKey: plaintext,
        fetch: async (request) => {
          const response = await fetch(request);
          seen.push({
            at: Date.now(),
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
          });
          return response;
        },
      });
      for (let read = 0; read < 3; read += 1) await recording.me();
      expect((await recording.me()).id).toBe(caller.userId);
      const refused = seen.findIndex((answer) => answer.status === 429);
      expect(refused).toBe(3);
      const retryAfter = Number(seen[refused]?.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      const next = seen[refused + 1];
      expect(next?.status).toBe(200);
      expect((next?.at ?? 0) - (seen[refused]?.at ?? 0)).toBeGreaterThanOrEqual(retryAfter * 1000 - 50);
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('sends a transfer again after its answer was lost on a dropped connection: one transaction', async () => {
    // A proxy in front of the service that forwards the first transfer, then closes the connection instead of
    // passing the answer back: the service did the work, the client saw a network failure.
    const upstream = new URL(origin);
    let dropped = 0;
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((downstream) => {
      sockets.add(downstream);
      const service = new Socket();
      sockets.add(service);
      let dropThis = false;
      service.connect(Number(upstream.port), upstream.hostname);
      downstream.on('data', (chunk: Buffer) => {
        if (dropped === 0 && chunk.toString('latin1').startsWith('POST /api/v1/transfer ')) {
          dropThis = true;
          dropped += 1;
        }
        service.write(chunk);
      });
      service.on('data', (chunk: Buffer) => {
        if (dropThis) {
          downstream.destroy();
          service.destroy();
        } else downstream.write(chunk);
      });
      downstream.on('error', () => service.destroy());
      service.on('error', () => downstream.destroy());
      downstream.on('close', () => service.destroy());
      service.on('close', () => downstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as { port: number };
      const { plaintext } = await apiKeyOf(ctx.app, owner);
      const seen: string[] = [];
      const viaProxy = createClient({
        baseUrl: `http://127.0.0.1:${port}/api/v1`,
        apiKey: plaintext,
        retry: { baseDelayMs: 50 },
        fetch: (request) => {
          seen.push(request.headers.get('idempotency-key') ?? '');
          return fetch(request);
        },
      });
      const payee = (await client.wallets.create({ type: 'CUSTODIAL', label: 'once' })).address;
      const transfer = await viaProxy.transfer({ walletId: wallet.id, to: payee, amount: '0.75' });
      expect(dropped).toBe(1);
      expect(seen).toHaveLength(2);
      expect(seen[0]).not.toBe('');
      expect(seen[1]).toBe(seen[0]);
      const toPayee: Transaction[] = [];
      for await (const transaction of client.transactions.list({ walletId: wallet.id, type: 'TRANSFER' })) {
        if (transaction.toAddress === payee) toPayee.push(transaction);
      }
      expect(toPayee.map((transaction) => transaction.id)).toEqual([transfer.id]);
      expect((await settled(client, transfer)).status).toBe('CONFIRMED');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });
});
