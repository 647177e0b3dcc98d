import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, type RequestBodyOf } from '../../../test/api.ts';
import { REFUSING_PORT } from '../../../test/faults/service.ts';
import {
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import { recordEvent } from '../../db/events.ts';
import { WEBHOOK_EVENT_TYPES, webhookDeliveries } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { startFollower } from '../incoming/follower.service.ts';
import { advanceTestClock } from '../sandbox/clock.service.ts';
import { startWebhookDelivery } from './delivery.service.ts';
import { postWebhook, refusedAddress } from './sender.ts';
import { checkEndpointUrl } from './webhooks.service.ts';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** A local receiver: every request is verified by the reference verifier with the secret registered for its path. */
class Receiver {
  readonly received: Received[] = [];
  readonly secrets = new Map<string, string[]>();
  /** Status codes to answer, per path, in order; 200 once the list is used up. */
  readonly answers = new Map<string, number[]>();
  readonly unverified: string[] = [];
  server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const path = request.url ?? '/';
      const secrets = this.secrets.get(path) ?? [];
      const headers = request.headers as Record<string, string>;
      if (secrets.length === 0) this.unverified.push(`${path}: no secret`);
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, headers);
        } catch (error) {
          this.unverified.push(`${path}: ${(error as Error).message}`);
        }
      }
      this.received.push({ path, headers: request.headers, body, payload: JSON.parse(body) });
      response.statusCode = this.answers.get(path)?.shift() ?? 200;
      response.end('ok');
    });
  });
  url = '';
  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  on(path: string) {
    return this.received.filter((item) => item.path === path);
  }
}

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
const receiver = new Receiver();
const stoppers: Array<() => Promise<void>> = [];
const silent = { info: () => {}, warn: () => {}, error: (...args: unknown[]) => console.error(...args) };

async function register(
  caller: Caller,
  path: string,
  extra: Omit<RequestBodyOf<'post', '/webhooks'>, 'url'> = {},
) {
  const response = await api.post('/webhooks', {
    body: { url: `${receiver.url}${path}`, ...extra },
    headers: caller.headers,
  });
  expect(response.statusCode).toBe(201);
  const { endpoint, secret } = response.json().data;
  receiver.secrets.set(path, [secret]);
  return { endpoint, secret: secret as string };
}

async function until<T>(
  read: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  await receiver.start();
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      FOLLOWER_POLL_MS: '20',
      WORKER_POLL_MS: '20',
    },
  });
  stoppers.push(await startWebhookDelivery(ctx.deps, silent), startFollower(ctx.deps, silent));
  alice = await signup(ctx.app);
  bob = await signup(ctx.app);
});
afterAll(async () => {
  for (const stop of stoppers) await stop();
  await ctx?.close();
  receiver.server.close();
});

describe('webhook endpoints', () => {
  it('registers, lists, reads, changes and deletes an endpoint; the secret is shown once, sealed at rest', async () => {
    const { endpoint, secret } = await register(alice, '/crud', {
      events: ['wallet.created'],
      description: 'd',
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(endpoint).toMatchObject({ events: ['wallet.created'], enabled: true, status: 'active' });
    const listed = (await api.get('/webhooks', { headers: alice.headers })).json().data.endpoints;
    expect(listed.map((item: { id: string }) => item.id)).toContain(endpoint.id);
    expect(JSON.stringify(listed)).not.toContain(secret);
    const patched = await api.patch('/webhooks/{id}', {
      params: { id: endpoint.id },
      body: { enabled: false },
      headers: alice.headers,
    });
    expect(patched.json().data.endpoint).toMatchObject({ enabled: false, status: 'disabled' });
    expect(
      (await api.get('/webhooks/{id}', { params: { id: endpoint.id }, headers: bob.headers })).statusCode,
    ).toBe(404);
    expect(
      (await api.delete('/webhooks/{id}', { params: { id: endpoint.id }, headers: bob.headers })).statusCode,
    ).toBe(404);
    expect(
      (await api.delete('/webhooks/{id}', { params: { id: endpoint.id }, headers: alice.headers }))
        .statusCode,
    ).toBe(200);
    expect(
      (await api.get('/webhooks/{id}', { params: { id: endpoint.id }, headers: alice.headers })).statusCode,
    ).toBe(404);
  });

  it('refuses URLs it will not send to, and an eleventh endpoint', async () => {
    for (const url of ['ftp://example.com/x', 'http://user:pw@example.com/x', 'http://10.0.0.8/x', 'nope']) {
      const refused = await api.post('/webhooks', { body: { url }, headers: bob.headers });
      expect(errorOf(refused)).toMatchObject({ status: 400, code: 'invalid_webhook_url' });
    }
    for (let i = 0; i < 10; i++) {
      expect(
        (await api.post('/webhooks', { body: { url: `https://example.com/${i}` }, headers: bob.headers }))
          .statusCode,
      ).toBe(201);
    }
    // A change of URL is checked as a new one is, and a refused change leaves the endpoint as it was.
    const first = (await api.get('/webhooks', { headers: bob.headers })).json().data.endpoints[0];
    for (const url of ['ftp://example.com/x', 'http://user:pw@example.com/x', 'http://10.0.0.8/x', 'nope']) {
      const refused = await api.patch('/webhooks/{id}', {
        params: { id: first.id },
        body: { url },
        headers: bob.headers,
      });
      expect(errorOf(refused), url).toMatchObject({ status: 400, code: 'invalid_webhook_url' });
    }
    expect(
      (await api.get('/webhooks/{id}', { params: { id: first.id }, headers: bob.headers })).json().data
        .endpoint.url,
    ).toBe(first.url);
    const eleventh = await api.post('/webhooks', {
      body: { url: 'https://example.com/11' },
      headers: bob.headers,
    });
    expect(errorOf(eleventh)).toMatchObject({ status: 400, code: 'webhook_limit_reached' });
    for (const endpoint of (await api.get('/webhooks', { headers: bob.headers })).json().data.endpoints) {
      await api.delete('/webhooks/{id}', { params: { id: endpoint.id }, headers: bob.headers });
    }
  });

  it('answers an unknown event with one validation_error detail that lists the allowed events', async () => {
    for (const method of ['POST', 'PATCH'] as const) {
      const target =
        method === 'POST' ? '/webhooks' : `/webhooks/${(await register(bob, '/events')).endpoint.id}`;
      // An event the document does not list: sent as is.
      const refused = await api.raw(method, target, {
        payload: { url: `${receiver.url}/events`, events: ['wallet.created', 'transaction.exploded'] },
        headers: bob.headers,
      });
      const error = errorOf(refused);
      expect(error).toMatchObject({ status: 400, code: 'validation_error' });
      expect(error.details).toEqual([{ path: 'events.1', message: expect.any(String) }]);
      const message = (error.details as Array<{ message: string }>)[0]?.message ?? '';
      for (const event of WEBHOOK_EVENT_TYPES) expect(message).toContain(`"${event}"`);
      expect(message).not.toContain('equal to constant');
    }
    for (const endpoint of (await api.get('/webhooks', { headers: bob.headers })).json().data.endpoints) {
      await api.delete('/webhooks/{id}', { params: { id: endpoint.id }, headers: bob.headers });
    }
  });

  it('counts a redirect and a slow endpoint as failed attempts: no redirect followed, 10 s budget', async () => {
    let followed = false;
    const odd = createServer((request, response) => {
      if (request.url === '/moved') {
        response.writeHead(302, { location: '/target' }).end();
      } else if (request.url === '/target') {
        followed = true;
        response.end('ok');
      }
      // '/slow' never answers.
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    const moved = await postWebhook({ url: `${base}/moved`, headers: {}, body: '{}', allowLoopback: true });
    expect(moved).toMatchObject({ statusCode: 302, error: 'the endpoint answered 302' });
    expect(followed).toBe(false);
    const slow = await postWebhook({
      url: `${base}/slow`,
      headers: {},
      body: '{}',
      allowLoopback: true,
      timeoutMs: 300,
    });
    expect(slow).toMatchObject({ statusCode: null, error: expect.stringMatching(/no answer within/) });
    expect(slow.durationMs).toBeGreaterThanOrEqual(250);
    odd.closeAllConnections();
    odd.close();
  });

  it('production accepts https to public hosts only; the sender checks the resolved address at connect time', async () => {
    const production = { config: { environment: 'production' } } as unknown as Deps;
    expect(checkEndpointUrl(production, 'https://hooks.example.com/in')).toBe('https://hooks.example.com/in');
    for (const url of [
      'http://hooks.example.com/in',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://localhost/x',
    ]) {
      expect(() => checkEndpointUrl(production, url)).toThrow();
    }
    expect(refusedAddress('169.254.169.254', true)).toMatch(/link-local/);
    expect(refusedAddress('::ffff:10.1.2.3', true)).toMatch(/private/);
    expect(refusedAddress('127.0.0.1', true)).toBeNull();
    expect(refusedAddress('93.184.216.34', false)).toBeNull();
    // `localhost` is a name: only the lookup made for the connection finds it is loopback.
    const port = new URL(receiver.url).port;
    const before = receiver.received.length;
    const outcome = await postWebhook({
      url: `http://localhost:${port}/ssrf`,
      headers: {},
      body: '{}',
      allowLoopback: false,
    });
    expect(outcome).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: .*loopback/) });
    expect(receiver.received.length).toBe(before);
  });
});

describe('deliveries', () => {
  it('sends signed transaction events the reference verifier accepts: out for the sender, in for the recipient', async () => {
    await register(alice, '/alice');
    await register(bob, '/bob', { events: ['transaction.created', 'wallet.created'] });
    const aliceWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers })
    ).json().data.wallet;
    const bobWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob.headers })
    ).json().data.wallet;
    const fund = await api.post('/fund', {
      body: { walletId: aliceWallet.id, amount: '50' },
      headers: alice.headers,
    });
    await waitForStatus(ctx.app, alice.headers, fund.json().data.transaction.id);
    const mint = await api.post('/mint', {
      body: { walletId: aliceWallet.id, amount: '30' },
      headers: alice.headers,
    });
    await waitForStatus(ctx.app, alice.headers, mint.json().data.transaction.id);
    const transfer = await api.post('/transfer', {
      body: {
        walletId: aliceWallet.id,
        to: bobWallet.address,
        amount: '12.5',
      },
      headers: alice.headers,
    });
    const sent = await waitForStatus(ctx.app, alice.headers, transfer.json().data.transaction.id);
    expect(sent.status).toBe('CONFIRMED');

    const confirmed = await until(
      () =>
        receiver
          .on('/alice')
          .find(
            (item) =>
              item.payload.type === 'transaction.updated' &&
              item.payload.data.id === sent.id &&
              item.payload.data.status === 'CONFIRMED',
          ),
      "the sender's transaction.updated CONFIRMED",
    );
    expect(confirmed.payload.data).toMatchObject({ type: 'TRANSFER', direction: 'out', amount: '12.50' });
    const incoming = await until(
      () =>
        receiver
          .on('/bob')
          .find(
            (item) => item.payload.type === 'transaction.created' && item.payload.data.direction === 'in',
          ),
      "the recipient's transaction.created (in)",
    );
    expect(incoming.payload.data).toMatchObject({
      type: 'TRANSFER',
      direction: 'in',
      amount: '12.50',
      walletId: bobWallet.id,
      txHash: sent.txHash,
    });
    expect(receiver.on('/bob').map((item) => item.payload.type)).not.toContain('transaction.updated');
    expect(receiver.on('/bob').some((item) => item.payload.type === 'wallet.created')).toBe(true);
    // One endpoint gets its events in the order they happened: the transfer created, then each status it took.
    const statuses = receiver
      .on('/alice')
      .filter((item) => item.payload.data.id === sent.id)
      .map((item) => `${item.payload.type}:${item.payload.data.status}`);
    expect(statuses[0]).toBe('transaction.created:QUEUED');
    expect(statuses.at(-1)).toBe('transaction.updated:CONFIRMED');
    expect(receiver.unverified).toEqual([]);
    for (const item of receiver.received) {
      expect(item.headers['webhook-id']).toMatch(/^msg_/);
      expect(item.payload.timestamp).toMatch(/Z$/);
    }
  });

  it('retries a 500 with the same webhook-id, exactly once more after a 200; attempts are listed', async () => {
    // The receiver is on the loopback (the sandbox allows it): its attempts record only whether they succeeded.
    const { endpoint } = await register(alice, '/flaky', { events: ['wallet.created'] });
    receiver.answers.set('/flaky', [500]);
    const test = await api.post('/webhooks/{id}/test', {
      params: { id: endpoint.id },
      headers: alice.headers,
    });
    expect(test.statusCode).toBe(202);
    const deliveryId = test.json().data.delivery.id;
    await until(() => (receiver.on('/flaky').length >= 2 ? true : undefined), 'the retry', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const sends = receiver.on('/flaky');
    expect(sends).toHaveLength(2);
    expect(sends[0]?.headers['webhook-id']).toBe(sends[1]?.headers['webhook-id']);
    expect(sends[0]?.payload.type).toBe('webhook.test');
    const deliveries = (
      await api.get('/webhooks/{id}/deliveries', { params: { id: endpoint.id }, headers: alice.headers })
    ).json().data;
    expect(deliveries.total).toBe(1);
    expect(deliveries.items[0]).toMatchObject({
      id: deliveryId,
      status: 'SUCCEEDED',
      eventType: 'webhook.test',
    });
    expect(deliveries.items[0].attempts).toEqual([
      { statusCode: null, durationMs: 0, error: expect.any(String), attemptedAt: expect.any(String) },
      { statusCode: null, durationMs: 0, error: null, attemptedAt: expect.any(String) },
    ]);
    expect(deliveries.items[0].attempts[0].error).not.toMatch(/500/);

    const replay = await api.post('/webhooks/{id}/deliveries/{deliveryId}/replay', {
      params: { id: endpoint.id, deliveryId },
      headers: alice.headers,
    });
    expect(replay.statusCode).toBe(202);
    await until(() => (receiver.on('/flaky').length >= 3 ? true : undefined), 'the replay');
    expect(receiver.on('/flaky')[2]?.headers['webhook-id']).toBe(sends[0]?.headers['webhook-id']);
    expect(
      (
        await api.post('/webhooks/{id}/deliveries/{deliveryId}/replay', {
          params: { id: endpoint.id, deliveryId },
          headers: bob.headers,
        })
      ).statusCode,
    ).toBe(404);
    expect(receiver.unverified).toEqual([]);
  });

  it('gives up after 3 days of failures: the delivery FAILED, the endpoint failing until a success', async () => {
    const { endpoint } = await register(alice, '/down', { events: ['wallet.created'] });
    receiver.answers.set('/down', [503]);
    // A delivery written 3 days and a minute ago, its last attempt due now.
    const old = new Date(Date.now() - (3 * 24 * 60 + 1) * 60_000);
    const deliveryId = await ctx.deps.database.db.transaction(async (tx) => {
      const [id] = await recordEvent(tx, {
        userId: alice.userId,
        type: 'webhook.test',
        kind: 'test',
        row: {},
        endpointId: endpoint.id,
      });
      await tx
        .update(webhookDeliveries)
        .set({ createdAt: old })
        .where(eq(webhookDeliveries.id, id as string));
      return id;
    });
    const read = async () =>
      (await api.get('/webhooks/{id}', { params: { id: endpoint.id }, headers: alice.headers })).json().data
        .endpoint;
    await until(async () => ((await read()).status === 'failing' ? true : undefined), 'the endpoint failing');
    const deliveries = (
      await api.get('/webhooks/{id}/deliveries', { params: { id: endpoint.id }, headers: alice.headers })
    ).json().data.items;
    expect(deliveries[0]).toMatchObject({ id: deliveryId, status: 'FAILED', nextAttemptAt: null });
    expect(deliveries[0].attempts[0]).toMatchObject({ statusCode: null, durationMs: 0 });
    expect(deliveries[0].attempts[0].error).not.toMatch(/503/);
    await api.post('/webhooks/{id}/test', { params: { id: endpoint.id }, headers: alice.headers });
    await until(
      async () => ((await read()).status === 'active' ? true : undefined),
      'the endpoint active again',
    );
  });

  it('tells nothing of what answers on a loopback port: a closed port, a 404, a 200 differ only in success', async () => {
    const closedPort = REFUSING_PORT;
    receiver.answers.set('/probe-404', [404]);
    const targets = [
      { url: `http://127.0.0.1:${closedPort}/probe`, ok: false },
      { url: `http://localhost:${closedPort}/probe`, ok: false },
      { url: `${receiver.url}/probe-404`, ok: false },
      { url: `${receiver.url}/probe-200`, ok: true },
    ];
    for (const target of targets) {
      const created = await api.post('/webhooks', {
        body: { url: target.url, events: ['wallet.created'] },
        headers: alice.headers,
      });
      const { endpoint, secret } = created.json().data;
      receiver.secrets.set(new URL(target.url).pathname, [secret]);
      await api.post('/webhooks/{id}/test', { params: { id: endpoint.id }, headers: alice.headers });
      const [delivery] = await until(async () => {
        const items = (
          await api.get('/webhooks/{id}/deliveries', { params: { id: endpoint.id }, headers: alice.headers })
        ).json().data.items;
        return items[0]?.attempts.length > 0 ? items : undefined;
      }, `an attempt at ${target.url}`);
      expect(delivery.attempts[0], target.url).toMatchObject({
        statusCode: null,
        durationMs: 0,
        error: target.ok ? null : 'the delivery failed (no detail is kept for a loopback address)',
      });
      await api.delete('/webhooks/{id}', { params: { id: endpoint.id }, headers: alice.headers });
    }
  });

  it('signs with the old and the new secret for 24 hours after a rotation', async () => {
    const { endpoint, secret: old } = await register(alice, '/rotated', { events: ['wallet.created'] });
    const rotated = await api.post('/webhooks/{id}/rotate-secret', {
      params: { id: endpoint.id },
      headers: alice.headers,
    });
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().data.secret;
    expect(fresh).not.toBe(old);
    expect(rotated.json().data.endpoint.previousSecretExpiresAt).not.toBeNull();
    receiver.secrets.set('/rotated', [old, fresh]);
    await api.post('/webhooks/{id}/test', { params: { id: endpoint.id }, headers: alice.headers });
    const sent = await until(() => receiver.on('/rotated')[0], 'the rotated delivery');
    expect(String(sent.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(receiver.unverified).toEqual([]);
  });

  it('keeps a letter sealed in every webhook before the claim, and reveals it in letter.claimed', async () => {
    await register(alice, '/letters', { events: ['letter.created', 'letter.claimed'] });
    const wallet = (await api.get('/wallets', { headers: alice.headers })).json().data.wallets[0];
    const bobWallet = (await api.get('/wallets', { headers: bob.headers })).json().data.wallets[0];
    const created = await api.post('/transfer/letter', {
      body: {
        walletId: wallet.id,
        amount: '2',
        memo: 'for the cake',
        recipient: {
          name: 'Bob',
          address: { line1: '1 Main St', city: 'Springfield', region: 'IL', country: 'US' },
        },
      },
      headers: alice.headers,
    });
    expect(created.statusCode).toBe(201);
    const first = await until(() => receiver.on('/letters')[0], 'letter.created');
    expect(first.payload).toMatchObject({ type: 'letter.created' });
    expect(first.payload.data).toMatchObject({ amount: 'sealed', memo: 'sealed', status: 'ESCROWED' });
    // The recipient as the API shows it: every address field present, line2 and landmark "", postal null.
    expect(first.payload.data.recipient).toEqual(created.json().data.letter.recipient);
    expect(first.payload.data.recipient).toEqual({
      name: 'Bob',
      address: {
        line1: '1 Main St',
        line2: '',
        landmark: '',
        city: 'Springfield',
        region: 'IL',
        postal: null,
        country: 'US',
        countryName: 'United States',
      },
    });
    expect(first.body).not.toContain('for the cake');
    expect(first.body).not.toContain(created.json().data.letter.claimCode);
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: created.json().data.letter.claimCode,
        walletId: bobWallet.id,
      },
      headers: bob.headers,
    });
    expect(claim.statusCode).toBe(200);
    const claimed = await until(
      () => receiver.on('/letters').find((item) => item.payload.type === 'letter.claimed'),
      'letter.claimed',
    );
    expect(claimed.payload.data).toMatchObject({ amount: '2.00', memo: 'for the cake', status: 'CLAIMED' });
    expect(receiver.unverified).toEqual([]);
  });
  it("sends as data byte for byte what GET answers for the resource at that moment (the API's own mappers)", async () => {
    const carol = await signup(ctx.app);
    await register(carol, '/mirror');
    const events = (type: string, id: string) =>
      receiver.on('/mirror').filter((item) => item.payload.type === type && item.payload.data.id === id);
    /** The raw bytes of the delivery's `data`, as sent: the body is `{type, timestamp, data}`. */
    const dataOf = (item: Received) => item.body.slice(item.body.indexOf(',"data":') + ',"data":'.length, -1);

    const wallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: carol.headers })
    ).json().data.wallet;
    const walletCreated = await until(() => events('wallet.created', wallet.id)[0], 'wallet.created');
    expect(
      (await api.get('/wallets/{id}', { params: { id: wallet.id }, headers: carol.headers })).body,
    ).toContain(`"wallet":${dataOf(walletCreated)}`);

    const fund = await api.post('/fund', {
      body: { walletId: wallet.id, amount: '50' },
      headers: carol.headers,
    });
    const funded = await waitForStatus(ctx.app, carol.headers, fund.json().data.transaction.id);
    const fundSettled = await until(
      () =>
        events('transaction.updated', funded.id).find((item) => item.payload.data.status === funded.status),
      'the fund settled',
    );
    expect(
      (await api.get('/transactions/{id}', { params: { id: funded.id }, headers: carol.headers })).body,
    ).toContain(`"transaction":${dataOf(fundSettled)}`);
    const mint = await api.post('/mint', {
      body: { walletId: wallet.id, amount: '30' },
      headers: carol.headers,
    });
    await waitForStatus(ctx.app, carol.headers, mint.json().data.transaction.id);

    const posted = await api.post('/transfer/letter', {
      body: {
        walletId: wallet.id,
        amount: '3',
        memo: 'mirror',
        recipient: {
          name: 'Dan',
          address: { line1: '2 Elm St', city: 'Shelbyville', region: 'IL', country: 'US' },
        },
      },
      headers: carol.headers,
    });
    expect(posted.statusCode).toBe(201);
    const letterId = posted.json().data.letter.id;
    const letterCreated = await until(() => events('letter.created', letterId)[0], 'letter.created');
    // The sender's view, less the claim code: a secret no event carries (the webhook shows it null).
    const escrowed = (
      await api.get('/transfer/letter/{id}', { params: { id: letterId }, headers: carol.headers })
    ).json().data.letter;
    expect(escrowed.claimCode).toMatch(/\S/);
    expect(dataOf(letterCreated)).toBe(JSON.stringify({ ...escrowed, claimCode: null, claimUrl: null }));
    expect(letterCreated.payload.data).toMatchObject({
      amount: 'sealed',
      memo: 'sealed',
      status: 'ESCROWED',
    });

    const bobWallet = (await api.get('/wallets', { headers: bob.headers })).json().data.wallets[0];
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: escrowed.claimCode,
        walletId: bobWallet.id,
      },
      headers: bob.headers,
    });
    expect(claim.statusCode).toBe(200);
    const letterClaimed = await until(() => events('letter.claimed', letterId)[0], 'letter.claimed');
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letterId }, headers: carol.headers })).body,
    ).toContain(`"letter":${dataOf(letterClaimed)}`);
    expect(letterClaimed.payload.data).toMatchObject({ amount: '3.00', memo: 'mirror', status: 'CLAIMED' });
    expect(receiver.unverified).toEqual([]);
  });

  // Last in the file: the test clock never moves back.
  it('signs with real time after the test clock moved: the reference verifier (which checks the timestamp against real time) accepts it', async () => {
    const dave = await signup(ctx.app);
    const { endpoint } = await register(dave, '/after-clock-move');
    await advanceTestClock(ctx.deps, 2 * 60 * 60);
    expect(
      (await api.post('/webhooks/{id}/test', { params: { id: endpoint.id }, headers: dave.headers }))
        .statusCode,
    ).toBe(202);
    const sent = await until(() => receiver.on('/after-clock-move')[0], 'the delivery after the clock moved');
    expect(receiver.unverified.filter((line) => line.startsWith('/after-clock-move'))).toEqual([]);
    const signedAt = Number(sent.headers['webhook-timestamp']) * 1000;
    expect(Math.abs(signedAt - Date.now())).toBeLessThan(60_000);
    // The event itself is dated on the service's (moved) clock, as every other timestamp it answers.
    expect(Date.parse(sent.payload.timestamp) - Date.now()).toBeGreaterThan(60 * 60_000);
  });
});
