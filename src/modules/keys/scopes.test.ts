/**
 * Scoped API keys (issue 29), through the HTTP API on the embedded chain: the key record, read-only keys, keys bound
 * to wallets, and the rolling 24-hour spend limit (its race included). Run with DATABASE_URL for PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, dataOf } from '../../../test/api.ts';
import { UNLIMITED_ENV } from '../../../test/hardening/fixture.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  toWindowStart,
  waitForStatus,
} from '../../../test/harness.ts';
import { startWorker } from '../../worker/worker.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const RECIPIENT = {
  name: 'Grace Hopper',
  address: { line1: '1 Navy Yard', city: 'Arlington', region: 'VA', postal: '22202', country: 'US' },
};
const quiet = { info: () => {}, warn: () => {}, error: (...args: unknown[]) => console.error(...args) };

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let owner: Caller;
let other: Caller;
/** The owner's wallets: A funded and minted (the bound and limited keys' wallet), B funded and minted, C empty. */
let walletA: { id: string; address: string };
let walletB: { id: string; address: string };
let walletC: { id: string; address: string };
let otherWallet: { id: string; address: string };
/** A FUND transaction of wallet B, and letters sent by the session from A and from B. */
let fundOfB: string;
let letterFromA: { id: string; claimCode: string };
let letterFromB: { id: string; claimCode: string };
/** A letter of the other account, for claims. */
let othersLetter: { id: string; claimCode: string };

type Headers = Record<string, string>;

/** Keys made by the tests, revoked after each group: an account holds 10 active keys. */
let made: Array<{ caller: Caller; id: string }> = [];

async function keyOf(caller: Caller, body: Record<string, unknown>) {
  const key = await apiKeyOf(ctx.app, caller, { name: 'scoped', ...body });
  made.push({ caller, id: key.key.id });
  return key;
}

async function revokeMadeKeys(): Promise<void> {
  for (const { caller, id } of made) {
    const response = await api.delete('/keys/{id}', { params: { id }, headers: caller.headers });
    expect(response.statusCode).toBe(200);
  }
  made = [];
}

async function runWorkerUntil(done: () => Promise<void>): Promise<void> {
  const stop = await startWorker(ctx.deps, quiet);
  try {
    await done();
  } finally {
    await stop();
  }
}

async function funded(caller: Caller, walletId: string, confidential: string) {
  const fund = dataOf(
    await api.post('/fund', { body: { walletId, amount: '100' }, headers: caller.headers }),
  );
  await waitForStatus(ctx.app, caller.headers, fund.transaction.id, ['CONFIRMED']);
  const mint = dataOf(
    await api.post('/mint', { body: { walletId, amount: confidential }, headers: caller.headers }),
  );
  await waitForStatus(ctx.app, caller.headers, mint.transaction.id, ['CONFIRMED']);
  return fund.transaction.id as string;
}

function sendLetter(headers: Headers, walletId: string, amount: string) {
  return api.post('/transfer/letter', { body: { walletId, amount, recipient: RECIPIENT }, headers });
}

/** A letter escrowed through the caller's session (mailable: its claim origin is https). */
async function sealedLetter(caller: Caller, walletId: string, amount: string) {
  const { letter } = dataOf(
    await api.post('/transfer/letter', {
      body: {
        walletId,
        amount,
        recipient: RECIPIENT,
        claimOrigin: 'https://claim.example.com',
      },
      headers: caller.headers,
    }),
  );
  return letter as { id: string; claimCode: string };
}

/** An answer with every letter's claim code and URL withheld, as a credential that may not send it sees it. */
function withoutClaimCodes(answer: unknown): unknown {
  if (Array.isArray(answer)) return answer.map(withoutClaimCodes);
  if (typeof answer !== 'object' || answer === null) return answer;
  const entries = Object.entries(answer).map(([name, value]) => [name, withoutClaimCodes(value)]);
  const withheld = 'claimCode' in answer ? { claimCode: null, claimUrl: null } : {};
  return { ...Object.fromEntries(entries), ...withheld };
}

beforeAll(async () => {
  ctx = await createTestContext({ network: true, env: UNLIMITED_ENV });
  owner = await signup(ctx.app);
  other = await signup(ctx.app);
  walletA = dataOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: owner.headers }),
  ).wallet;
  walletB = dataOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: owner.headers }),
  ).wallet;
  walletC = dataOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: owner.headers }),
  ).wallet;
  otherWallet = dataOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: other.headers }),
  ).wallet;
  await runWorkerUntil(async () => {
    await funded(owner, walletA.id, '60');
    fundOfB = await funded(owner, walletB.id, '20');
    await funded(other, otherWallet.id, '10');
    letterFromA = await sealedLetter(owner, walletA.id, '1');
    letterFromB = await sealedLetter(owner, walletB.id, '1');
    othersLetter = await sealedLetter(other, otherWallet.id, '2');
  });
}, 300_000);
afterAll(() => ctx?.close());

describe('POST /keys with a scope', () => {
  afterAll(revokeMadeKeys);

  it('keeps a key without one as before: full, every wallet, no limit, no spentLast24h', async () => {
    const { key } = await keyOf(owner, {});
    expect(key).toMatchObject({ permissions: 'full', walletIds: null, spendLimit: null });
    expect(key).not.toHaveProperty('spentLast24h');
    const listed = (await api.get('/keys', { headers: owner.headers }))
      .json()
      .data.keys.find((k: { id: string }) => k.id === key.id);
    expect(listed).toEqual(key);
  });

  it('records the scope, and GET /keys shows it with what a limited key spent', async () => {
    const { key } = await keyOf(owner, {
      permissions: 'full',
      walletIds: [walletA.id, walletB.id],
      spendLimit: { amount: '12.5', period: '24h' },
    });
    expect(key).toMatchObject({
      permissions: 'full',
      walletIds: [walletA.id, walletB.id],
      spendLimit: { amount: '12.50', period: '24h' },
      spentLast24h: '0.00',
    });
    const readOnly = await keyOf(owner, { permissions: 'read_only' });
    expect(readOnly.key).toMatchObject({ permissions: 'read_only', walletIds: null, spendLimit: null });
    const listed = (await api.get('/keys', { headers: owner.headers })).json().data.keys;
    expect(listed.find((k: { id: string }) => k.id === key.id)).toEqual(key);
  });

  it.each([
    [{ permissions: 'admin' }, 'permissions'],
    [{ permissions: 'READ_ONLY' }, 'permissions'],
    [{ walletIds: [] }, 'walletIds'],
    [{ walletIds: 'wallet' }, 'walletIds'],
    [{ walletIds: [''] }, 'walletIds.0'],
    [{ spendLimit: { amount: '0', period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: '0.00', period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: '-1', period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: '1e3', period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: '1.0000001', period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: 10, period: '24h' } }, 'spendLimit.amount'],
    [{ spendLimit: { amount: '10', period: '1h' } }, 'spendLimit.period'],
    [{ spendLimit: { amount: '10' } }, 'spendLimit.period'],
    [{ spendLimit: '10' }, 'spendLimit'],
    [{ permissions: 'read_only', spendLimit: { amount: '10', period: '24h' } }, 'spendLimit'],
  ])('refuses %j: 400 validation_error naming %s', async (scope, path) => {
    // Scopes the document does not allow: sent as is.
    const response = await api.raw('POST', '/keys', {
      payload: { name: 'bad scope', ...scope },
      headers: owner.headers,
    });
    const error = errorOf(response);
    expect(error).toMatchObject({ status: 400, code: 'validation_error' });
    expect((error.details as Array<{ path: string }>).map((detail) => detail.path)).toContain(path);
  });

  it("refuses a repeated wallet id (400) and a wallet that is not the account's (404 not_found)", async () => {
    const repeated = await api.post('/keys', {
      body: { name: 'x', walletIds: [walletA.id, walletA.id] },
      headers: owner.headers,
    });
    expect(errorOf(repeated)).toMatchObject({ status: 400, code: 'validation_error' });
    for (const walletIds of [[otherWallet.id], [walletA.id, otherWallet.id], ['no-such-wallet']]) {
      const response = await api.post('/keys', { body: { name: 'x', walletIds }, headers: owner.headers });
      expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('a read-only key', () => {
  afterAll(revokeMadeKeys);

  it('reads what a full key reads', async () => {
    const full = await keyOf(owner, {});
    const readOnly = await keyOf(owner, { permissions: 'read_only' });
    for (const url of [
      '/me',
      '/wallets',
      `/wallets/${walletA.id}`,
      '/gas',
      '/transactions?pageSize=100',
      `/transactions/${fundOfB}`,
      '/transfer/letter',
      `/transfer/letter/${letterFromA.id}`,
      '/webhooks',
    ]) {
      // A table of routes walked in a loop: each sent as written.
      const [asFull, asReadOnly] = [
        await api.raw('GET', url, { headers: full.headers }),
        await api.raw('GET', url, { headers: readOnly.headers }),
      ];
      expect(asReadOnly.statusCode, url).toBe(200);
      // Letters without their claim codes: a code is a credential to the escrowed money (below).
      expect(asReadOnly.json(), url).toEqual(withoutClaimCodes(asFull.json()));
    }
    // A receipt is issued afresh on each read (its issuedAt differs).
    expect(
      (await api.get('/transactions/{id}/nota', { params: { id: fundOfB }, headers: readOnly.headers }))
        .statusCode,
    ).toBe(200);
  });

  it('is refused every write with 403 insufficient_scope, each counted in the write budget', async () => {
    const { headers } = await keyOf(owner, { permissions: 'read_only' });
    toWindowStart(ctx.clock, 60_000);
    const writes: Array<[string, string, object]> = [
      ['POST', '/wallets', { type: 'CUSTODIAL' }],
      ['POST', `/wallets/${walletA.id}/primary`, {}],
      ['PATCH', '/me', { name: 'Changed' }],
      ['POST', '/fund', { walletId: walletA.id, amount: '1' }],
      ['POST', '/mint', { walletId: walletA.id, amount: '1' }],
      ['POST', '/transfer', { walletId: walletA.id, to: otherWallet.address, amount: '1' }],
      ['POST', '/redeem', { walletId: walletA.id, amount: '1' }],
      ['POST', '/transfer/letter', { walletId: walletA.id, amount: '1', recipient: RECIPIENT }],
      ['POST', `/transfer/letter/${letterFromA.id}/void`, {}],
      ['POST', `/transfer/letter/${letterFromA.id}/mail`, {}],
      ['POST', '/notas/verify', { nota: 'x' }],
    ];
    const remaining: number[] = [];
    for (const [method, url, payload] of writes) {
      // A table of routes walked in a loop: each sent as written.
      const response = await api.raw(method as 'POST' | 'PATCH', url, { payload, headers });
      expect(errorOf(response), `${method} ${url}`).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
      });
      expect(String(response.headers['ratelimit-limit'])).toBe(UNLIMITED_ENV.RATE_LIMIT_WRITES_PER_MINUTE);
      remaining.push(Number(response.headers['ratelimit-remaining']));
    }
    // One unit of the write budget per refused write.
    expect(remaining).toEqual(remaining.map((_, i) => (remaining[0] as number) - i));
    // The claim is a write too, counted in the claim budget.
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: othersLetter.claimCode,
        walletId: walletA.id,
      },
      headers,
    });
    expect(errorOf(claim)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(claim.headers['ratelimit-remaining']).toBeDefined();
    // Nothing was written: the letter is still escrowed, the name unchanged, no wallet added.
    const letter = (
      await api.get('/transfer/letter/{id}', { params: { id: letterFromA.id }, headers: owner.headers })
    ).json().data.letter;
    expect(letter.status).toBe('ESCROWED');
    expect((await api.get('/me', { headers: owner.headers })).json().data.user.name).not.toBe('Changed');
    expect((await api.get('/wallets', { headers: owner.headers })).json().data.wallets).toHaveLength(3);
  });
});

describe('a key bound to one wallet', () => {
  afterAll(revokeMadeKeys);

  let bound: { headers: Headers; key: { id: string } };
  let full: { headers: Headers };

  beforeAll(async () => {
    bound = await keyOf(owner, { walletIds: [walletA.id] });
    full = await keyOf(owner, {});
  });

  it('lists that wallet alone: wallets, balances, gas', async () => {
    const wallets = (await api.get('/wallets', { headers: bound.headers })).json().data.wallets;
    expect(wallets.map((wallet: { id: string }) => wallet.id)).toEqual([walletA.id]);
    const balances = (await api.get('/balances', { headers: bound.headers })).json().data.balances;
    expect(balances.map((balance: { wallet: { id: string } }) => balance.wallet.id)).toEqual([walletA.id]);
    const gas = (await api.get('/gas', { headers: bound.headers })).json().data.wallets;
    expect(gas.map((record: { walletId: string }) => record.walletId)).toEqual([walletA.id]);
    expect((await api.get('/wallets', { headers: full.headers })).json().data.wallets).toHaveLength(3);
  });

  it("lists that wallet's transactions alone, with their total (and a full key's page is not served to it)", async () => {
    const page = { query: { pageSize: 100 } };
    const before = (await api.get('/transactions', { ...page, headers: full.headers })).json().data;
    const mine = (await api.get('/transactions', { ...page, headers: bound.headers })).json().data;
    const expected = before.items.filter((item: { walletId: string }) => item.walletId === walletA.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(mine.items).toEqual(expected);
    expect(mine.total).toBe(expected.length);
    // And the other way round: the bound key's page is not served to the full key.
    const after = (await api.get('/transactions', { ...page, headers: full.headers })).json().data;
    expect(after.total).toBe(before.total);
    expect(after.total).toBeGreaterThan(mine.total);
    const filtered = (
      await api.get('/transactions', {
        query: { walletId: walletA.id, status: 'CONFIRMED' },
        headers: bound.headers,
      })
    ).json().data;
    expect(filtered.total).toBe(
      expected.filter((item: { status: string }) => item.status === 'CONFIRMED').length,
    );
  });

  it('lists the letters sent from that wallet alone, with their total', async () => {
    const all = (
      await api.get('/transfer/letter', { query: { pageSize: 100 }, headers: full.headers })
    ).json().data;
    const mine = (
      await api.get('/transfer/letter', { query: { pageSize: 100 }, headers: bound.headers })
    ).json().data;
    const expected = all.items.filter(
      (letter: { sender: { walletId: string } }) => letter.sender.walletId === walletA.id,
    );
    expect(mine.items.map((letter: { id: string }) => letter.id)).toEqual(
      expected.map((letter: { id: string }) => letter.id),
    );
    expect(mine.items.map((letter: { id: string }) => letter.id)).toContain(letterFromA.id);
    expect(mine.total).toBe(expected.length);
    expect(all.total).toBeGreaterThan(mine.total);
    const escrowed = (
      await api.get('/transfer/letter', { query: { status: 'ESCROWED' }, headers: bound.headers })
    ).json().data;
    expect(escrowed.total).toBe(
      expected.filter((letter: { status: string }) => letter.status === 'ESCROWED').length,
    );
  });

  it("reads the account's other wallets, their transactions and letters as another account's: 404", async () => {
    const notFound = { status: 404, code: 'not_found' };
    const letterNotFound = { status: 404, code: 'letter_not_found' };
    // Tables of routes walked in loops: each request sent as written (a POST with the file's empty JSON body).
    for (const url of [
      `/wallets/${walletB.id}`,
      `/balances?walletId=${walletB.id}`,
      `/gas?walletId=${walletB.id}`,
      `/transactions?walletId=${walletB.id}`,
      `/transactions/${fundOfB}`,
      `/transactions/${fundOfB}/nota`,
    ]) {
      expect(errorOf(await api.raw('GET', url, { headers: bound.headers })), url).toMatchObject(notFound);
    }
    for (const url of [`/transfer/letter/${letterFromB.id}`, `/transfer/letter/${letterFromB.id}/pdf`]) {
      expect(errorOf(await api.raw('GET', url, { headers: bound.headers })), url).toMatchObject(
        letterNotFound,
      );
    }
    for (const [url, payload] of [
      ['/fund', { walletId: walletB.id, amount: '1' }],
      ['/mint', { walletId: walletB.id, amount: '1' }],
      ['/transfer', { walletId: walletB.id, to: otherWallet.address, amount: '1' }],
      ['/redeem', { walletId: walletB.id, amount: '1' }],
      ['/transfer/letter', { walletId: walletB.id, amount: '1', recipient: RECIPIENT }],
      [`/wallets/${walletB.id}/primary`, {}],
      ['/transfer/letter/claim', { claimCode: othersLetter.claimCode, walletId: walletB.id }],
    ] as Array<[string, object]>) {
      expect(errorOf(await api.raw('POST', url, { payload, headers: bound.headers })), url).toMatchObject(
        notFound,
      );
    }
    for (const url of [
      `/transfer/letter/${letterFromB.id}/void`,
      `/transfer/letter/${letterFromB.id}/mail`,
    ]) {
      expect(errorOf(await api.raw('POST', url, { payload: {}, headers: bound.headers })), url).toMatchObject(
        letterNotFound,
      );
    }
    // Nothing of wallet B moved.
    const letter = (
      await api.get('/transfer/letter/{id}', { params: { id: letterFromB.id }, headers: owner.headers })
    ).json().data.letter;
    expect(letter.status).toBe('ESCROWED');
    const claimable = (
      await api.get('/transfer/letter/{id}', { params: { id: othersLetter.id }, headers: other.headers })
    ).json().data.letter;
    expect(claimable.status).toBe('ESCROWED');
  });

  it('acts on its own wallet, and cannot create one: 403 insufficient_scope', async () => {
    // With the empty JSON body the file always sent (the route takes none).
    const primary = await api.raw('POST', `/wallets/${walletA.id}/primary`, {
      payload: {},
      headers: bound.headers,
    });
    expect(primary.statusCode).toBe(200);
    expect(
      errorOf(await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bound.headers })),
    ).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
    });
    expect((await api.get('/wallets', { headers: owner.headers })).json().data.wallets).toHaveLength(3);
    const letter = await sendLetter(bound.headers, walletA.id, '1');
    expect(letter.statusCode).toBe(201);
    expect(letter.json().data.letter.sender.walletId).toBe(walletA.id);
  });

  it('claims into its wallet, and only a key that sees that wallet reads the claim back', async () => {
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: othersLetter.claimCode,
        walletId: walletA.id,
      },
      headers: bound.headers,
    });
    expect(claim.statusCode).toBe(200);
    expect(claim.json().data.transaction.walletId).toBe(walletA.id);
    const boundToB = await keyOf(owner, { walletIds: [walletB.id] });
    const code = othersLetter.claimCode;
    expect(
      (await api.get('/transfer/letter/claim', { query: { code }, headers: bound.headers })).statusCode,
    ).toBe(200);
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: othersLetter.id }, headers: bound.headers }))
        .statusCode,
    ).toBe(200);
    expect(
      errorOf(await api.get('/transfer/letter/claim', { query: { code }, headers: boundToB.headers })),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    expect(
      errorOf(
        await api.get('/transfer/letter/{id}', {
          params: { id: othersLetter.id },
          headers: boundToB.headers,
        }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    const claimTransaction = claim.json().data.transaction.id;
    expect(
      errorOf(
        await api.get('/transactions/{id}', { params: { id: claimTransaction }, headers: boundToB.headers }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('lists only itself and the keys bound within its wallets', async () => {
    const alsoA = await keyOf(owner, { walletIds: [walletA.id], permissions: 'read_only' });
    const ids = (await api.get('/keys', { headers: bound.headers }))
      .json()
      .data.keys.map((key: { id: string }) => key.id);
    expect(ids).toContain(bound.key.id);
    expect(ids).toContain(alsoA.key.id);
    const all = (await api.get('/keys', { headers: owner.headers })).json().data.keys;
    const expected = all.filter((key: { walletIds: string[] | null }) =>
      key.walletIds?.every((id) => id === walletA.id),
    );
    expect(ids).toEqual(expected.map((key: { id: string }) => key.id));
    expect(all.length).toBeGreaterThan(ids.length);
  });
});

describe("a letter's claim code: shown only through a credential that may send its amount, or the key that created it", () => {
  afterAll(revokeMadeKeys);
  const withheld = { claimCode: null, claimUrl: null };
  /** A letter of 5.00 that the owner's session sent from wallet B. */
  let letter: { id: string; claimCode: string };
  let keys: Record<
    'readOnly' | 'limitBelow' | 'limitCovers' | 'limitMostlySpent' | 'full',
    Awaited<ReturnType<typeof keyOf>>
  >;
  /** The letter of 6.00 that the key limited to 10 a day sent itself, as its creation answered it. */
  let keysOwn: { id: string; claimCode: string | null };

  beforeAll(async () => {
    letter = await sealedLetter(owner, walletB.id, '5');
    keys = {
      readOnly: await keyOf(owner, { permissions: 'read_only' }),
      limitBelow: await keyOf(owner, { spendLimit: { amount: '4.99', period: '24h' } }),
      limitCovers: await keyOf(owner, { spendLimit: { amount: '5', period: '24h' } }),
      limitMostlySpent: await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } }),
      full: await keyOf(owner, {}),
    };
    // 6 of its 10 spent on a letter of its own: 4 left, below the session's letter of 5.
    const created = await sendLetter(keys.limitMostlySpent.headers, walletB.id, '6');
    expect(created.statusCode).toBe(201);
    keysOwn = created.json().data.letter;
  }, 120_000);

  /** The letter as `headers` reads it: by id, in the list, and as its PDF. */
  async function readsOf(headers: Headers, id = letter.id) {
    const one = await api.get('/transfer/letter/{id}', { params: { id }, headers });
    const list = await api.get('/transfer/letter', { query: { pageSize: 100 }, headers });
    const listed = list.json().data.items.find((item: { id: string }) => item.id === id);
    const pdf = await api.get('/transfer/letter/{id}/pdf', { params: { id }, headers });
    return { one, list, listed, pdf };
  }

  it('withholds it from a read-only key and from limited keys whose allowance left is below the amount: null code and URL, no PDF (403 insufficient_scope)', async () => {
    for (const name of ['readOnly', 'limitBelow', 'limitMostlySpent'] as const) {
      const { headers } = keys[name];
      const { one, list, listed, pdf } = await readsOf(headers);
      expect(one.statusCode, name).toBe(200);
      expect(one.json().data.letter, name).toMatchObject({ id: letter.id, status: 'ESCROWED', ...withheld });
      expect(listed, name).toMatchObject(withheld);
      expect(errorOf(pdf), name).toMatchObject({ status: 403, code: 'insufficient_scope' });
      for (const body of [one.body, list.body, pdf.body]) expect(body, name).not.toContain(letter.claimCode);
    }
  });

  it('shows it to the key that created the letter, a limited key whose allowance covers it, a full key and a session', async () => {
    const creator = keys.limitMostlySpent.headers;
    expect(keysOwn.claimCode).toMatch(/\S/);
    const own = await readsOf(creator, keysOwn.id);
    expect(own.one.json().data.letter.claimCode).toBe(keysOwn.claimCode);
    expect(own.listed.claimCode).toBe(keysOwn.claimCode);
    expect(own.listed.claimUrl).toContain(keysOwn.claimCode);
    expect(own.pdf.statusCode).toBe(200);
    expect(own.pdf.headers['content-type']).toBe('application/pdf');
    for (const [name, headers] of [
      ['limitCovers', keys.limitCovers.headers],
      ['full', keys.full.headers],
      ['session', owner.headers],
    ] as const) {
      const { one, listed, pdf } = await readsOf(headers);
      expect(one.json().data.letter.claimCode, name).toBe(letter.claimCode);
      expect(listed.claimCode, name).toBe(letter.claimCode);
      expect(listed.claimUrl, name).toContain(letter.claimCode);
      expect(pdf.statusCode, name).toBe(200);
    }
    // The key's own letter is another matter for the other keys: a read-only key reads it without its code.
    const readOnly = await readsOf(keys.readOnly.headers, keysOwn.id);
    expect(readOnly.one.json().data.letter).toMatchObject(withheld);
  });

  it('the reported exploit: nothing a read-only key reads lets another account claim the letter', async () => {
    const { headers } = keys.readOnly;
    const { one, list } = await readsOf(headers);
    const letters = [one.json().data.letter, ...list.json().data.items] as Array<{
      claimCode: string | null;
      claimUrl: string | null;
    }>;
    const codes = letters.flatMap((item) => [item.claimCode, item.claimUrl?.split('#')[1] ?? null]);
    expect(codes.filter((code) => code !== null)).toEqual([]);
    // The code itself still claims: the money was never at risk from anything but a leak of it.
    const preview = await api.get('/transfer/letter/preview', { query: { code: letter.claimCode } });
    expect(preview.json().data.letter).toMatchObject({ status: 'ESCROWED', claimable: true });
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: owner.headers })).json()
        .data.letter.status,
    ).toBe('ESCROWED');
  });
});

describe('a key with a 10-unit daily limit', () => {
  /** A full key that reads the keys' records (the owner's session would not outlive the clock's moves). */
  let reader: { headers: Headers };
  beforeAll(async () => {
    reader = await keyOf(owner, {});
  });
  const transfer = (headers: Headers, amount: string, walletId = walletA.id, extra: Headers = {}) =>
    api.post('/transfer', {
      body: { walletId, to: otherWallet.address, amount },
      headers: { ...headers, ...extra },
    });
  const spentOf = async (keyId: string) =>
    (await api.get('/keys', { headers: reader.headers }))
      .json()
      .data.keys.find((key: { id: string }) => key.id === keyId).spentLast24h as string;

  it('stops counting a transfer that FAILED', async () => {
    // Wallet C holds no cSTABLE: its transfer moves an encrypted zero and ends FAILED.
    const limited = await keyOf(owner, {
      walletIds: [walletC.id],
      spendLimit: { amount: '10', period: '24h' },
    });
    const failing = await transfer(limited.headers, '8', walletC.id);
    expect(failing.statusCode).toBe(201);
    expect(await spentOf(limited.key.id)).toBe('8.00');
    expect(errorOf(await transfer(limited.headers, '8', walletC.id)).code).toBe('spend_limit_exceeded');
    await runWorkerUntil(async () => {
      const failed = await waitForStatus(
        ctx.app,
        owner.headers,
        failing.json().data.transaction.id,
        ['FAILED', 'CONFIRMED'],
        120_000,
      );
      expect(failed.status).toBe('FAILED');
    });
    expect(await spentOf(limited.key.id)).toBe('0.00');
    expect((await transfer(limited.headers, '10', walletC.id)).statusCode).toBe(201);
  }, 180_000);

  it('sends up to the limit, transfers and letters alike, then 403 spend_limit_exceeded with its figures', async () => {
    const limited = await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } });
    const first = await transfer(limited.headers, '4');
    expect(first.statusCode).toBe(201);
    const firstAt = new Date(first.json().data.transaction.createdAt).getTime();
    expect((await sendLetter(limited.headers, walletA.id, '3.5')).statusCode).toBe(201);
    expect(await spentOf(limited.key.id)).toBe('7.50');

    const over = await transfer(limited.headers, '3');
    expect(errorOf(over)).toMatchObject({
      status: 403,
      code: 'spend_limit_exceeded',
      details: {
        limit: '10.00',
        spent: '7.50',
        remaining: '2.50',
        // Once the first transfer's 4 leave the window, 3 fits.
        resetsAt: new Date(firstAt + DAY_MS).toISOString(),
      },
    });
    const letterOver = await sendLetter(limited.headers, walletA.id, '2.51');
    expect(errorOf(letterOver)).toMatchObject({ status: 403, code: 'spend_limit_exceeded' });
    // Exactly up to the limit is allowed.
    const last = await transfer(limited.headers, '2.5');
    expect(last.statusCode).toBe(201);
    const lastAt = new Date(last.json().data.transaction.createdAt).getTime();
    expect(await spentOf(limited.key.id)).toBe('10.00');
    const full = errorOf(await transfer(limited.headers, '0.000001'));
    expect(full).toMatchObject({
      code: 'spend_limit_exceeded',
      details: { spent: '10.00', remaining: '0.00', resetsAt: new Date(firstAt + DAY_MS).toISOString() },
    });
    // An amount above the limit itself: free again once everything counted has left the window.
    const huge = errorOf(await transfer(limited.headers, '11'));
    expect(huge.details).toMatchObject({ resetsAt: new Date(lastAt + DAY_MS).toISOString() });

    // What leaves nothing the account holds does not count: mint, redeem, the faucet.
    expect(
      (await api.post('/mint', { body: { walletId: walletA.id, amount: '1' }, headers: limited.headers }))
        .statusCode,
    ).toBe(201);
    expect(
      (await api.post('/redeem', { body: { walletId: walletA.id, amount: '1' }, headers: limited.headers }))
        .statusCode,
    ).toBe(201);
    expect(
      (await api.post('/fund', { body: { walletId: walletA.id, amount: '1' }, headers: limited.headers }))
        .statusCode,
    ).toBe(201);
    // A session is never limited by its account's keys; another key has its own limit.
    expect((await transfer(owner.headers, '5')).statusCode).toBe(201);
    const second = await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } });
    expect((await transfer(second.headers, '5')).statusCode).toBe(201);
    expect(await spentOf(limited.key.id)).toBe('10.00');
  });

  it('counts an Idempotency-Key replay once', async () => {
    const limited = await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } });
    const key = { 'idempotency-key': `replay-${limited.key.id}` };
    const first = await transfer(limited.headers, '6', walletA.id, key);
    const again = await transfer(limited.headers, '6', walletA.id, key);
    expect(again.statusCode).toBe(201);
    expect(again.json().data.transaction.id).toBe(first.json().data.transaction.id);
    expect(await spentOf(limited.key.id)).toBe('6.00');
  });

  it('holds under 20 concurrent transfers: exactly the limit is sent', async () => {
    const limited = await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => transfer(limited.headers, '1')));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses).toEqual([...Array(10).fill(201), ...Array(10).fill(403)]);
    for (const answer of answers.filter((a) => a.statusCode === 403)) {
      expect(errorOf(answer).code).toBe('spend_limit_exceeded');
    }
    expect(await spentOf(limited.key.id)).toBe('10.00');
  }, 60_000);

  it('rolls: what was sent more than 24 hours ago no longer counts', async () => {
    const limited = await keyOf(owner, { spendLimit: { amount: '10', period: '24h' } });
    expect((await transfer(limited.headers, '7')).statusCode).toBe(201);
    ctx.clock.advance(DAY_MS - 60_000);
    expect(errorOf(await transfer(limited.headers, '7')).code).toBe('spend_limit_exceeded');
    expect((await transfer(limited.headers, '3')).statusCode).toBe(201);
    ctx.clock.advance(60_000);
    // The 7 left the window; the 3 sent a minute before the end still counts.
    expect(await spentOf(limited.key.id)).toBe('3.00');
    expect((await transfer(limited.headers, '7')).statusCode).toBe(201);
    expect(errorOf(await transfer(limited.headers, '0.01')).code).toBe('spend_limit_exceeded');
  });
});
