import { eq } from 'drizzle-orm';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, type RequestBodyOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  sessionCookieOf,
  signup,
  type TestContext,
  toWindowStart,
  waitForStatus,
} from '../../../test/harness.ts';
import { sendTransactionOrThrow } from '../../adapters/chain/tx.ts';
import { encodeLetterRefund } from '../../adapters/confidential/helpers.ts';
import type { MailResult, PrintProvider } from '../../adapters/mail/index.ts';
import { letters } from '../../db/schema/index.ts';
import { AppError } from '../../lib/errors.ts';
import { findLetterById } from './letters.repository.ts';
import { startLetterSweeper } from './sweep.service.ts';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let sender: Caller;
let senderWallet: { id: string; address: string };
let recipient: Caller;
let recipientWallet: { id: string; address: string };

const RECIPIENT = {
  name: 'Ada Lovelace',
  address: {
    line1: '12 St James Square',
    city: 'London',
    region: 'London',
    postal: 'SW1Y 4JH',
    country: 'gb',
  },
};

async function createWallet(caller: Caller, body: RequestBodyOf<'post', '/wallets'> = { type: 'CUSTODIAL' }) {
  return (await api.post('/wallets', { body, headers: caller.headers })).json().data.wallet;
}

async function confidential(caller: Caller, walletId: string): Promise<string> {
  return (await api.get('/balances', { query: { walletId }, headers: caller.headers })).json().data
    .balances[0].confidential.amount;
}

async function createLetter(body: Partial<RequestBodyOf<'post', '/transfer/letter'>> = {}) {
  const response = await api.post('/transfer/letter', {
    body: { walletId: senderWallet.id, amount: '10', memo: 'For the engines', recipient: RECIPIENT, ...body },
    headers: sender.headers,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.letter;
}

/** A second session of the account (a login of its own): another principal of the same account. */
async function freshSession(caller: Caller): Promise<string> {
  const response = await api.post('/auth/login', {
    body: { email: caller.email, password: caller.password },
  });
  expect(response.statusCode).toBe(200);
  return sessionCookieOf(response.headers['set-cookie']);
}

async function waitForLetter(
  caller: Caller,
  id: string,
  predicate: (letter: { status: string; refund: { status: string } | null }) => boolean,
) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const letter = (
      await api.get('/transfer/letter/{id}', { params: { id }, headers: caller.headers })
    ).json().data.letter;
    if (predicate(letter)) return letter;
    if (Date.now() > deadline) throw new Error(`letter ${id} never matched: ${JSON.stringify(letter)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      SWEEP_SECRET: 'operator-sweep-secret',
    },
  });
  sender = await signup(ctx.app);
  recipient = await signup(ctx.app);
  senderWallet = await createWallet(sender);
  recipientWallet = await createWallet(recipient);
  const fund = await api.post('/fund', {
    body: { walletId: senderWallet.id, amount: '1000' },
    headers: sender.headers,
  });
  await waitForStatus(ctx.app, sender.headers, fund.json().data.transaction.id);
  const mint = await api.post('/mint', {
    body: { walletId: senderWallet.id, amount: '500' },
    headers: sender.headers,
  });
  expect((await waitForStatus(ctx.app, sender.headers, mint.json().data.transaction.id)).status).toBe(
    'CONFIRMED',
  );
});
afterAll(() => ctx.close());

describe('create', () => {
  it('escrows the sealed amount and answers 201 ESCROWED with every field of the interface', async () => {
    const before = await confidential(sender, senderWallet.id);
    const letter = await createLetter();
    expect(Object.keys(letter).sort()).toEqual(
      [
        'id',
        'status',
        'chainId',
        'amount',
        'token',
        'amountVisibility',
        'memo',
        'recipient',
        'isDomestic',
        'expiresAt',
        'sender',
        'claimCode',
        'claimUrl',
        'pdfUrl',
        'escrow',
        'claim',
        'refund',
        'mail',
        'needsReview',
        'error',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(letter).toMatchObject({
      status: 'ESCROWED',
      chainId: 31337,
      amount: 'sealed',
      memo: 'sealed',
      token: 'cSTABLE',
      amountVisibility: 'sealed',
      isDomestic: false,
      sender: { walletId: senderWallet.id, address: senderWallet.address },
      claim: null,
      refund: null,
      mail: null,
      needsReview: false,
      error: null,
    });
    expect(letter.recipient).toEqual({
      name: 'Ada Lovelace',
      address: {
        line1: '12 St James Square',
        line2: '',
        landmark: '',
        city: 'London',
        region: 'London',
        postal: 'SW1Y 4JH',
        country: 'GB',
        countryName: 'United Kingdom',
      },
    });
    expect(letter.claimCode).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){6}$/);
    expect(letter.claimUrl).toBe(`http://localhost:8080/claim#${letter.claimCode}`);
    expect(letter.pdfUrl).toBe(`http://localhost:8080/api/v1/transfer/letter/${letter.id}/pdf`);
    expect(letter.escrow).toMatchObject({
      status: 'CONFIRMED',
      verified: true,
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(new Date(letter.expiresAt).getTime() - new Date(letter.createdAt).getTime()).toBe(90 * 86_400_000);
    // What left the wallet shows in the sender's own balance and transactions, never in the letter.
    expect(Number(await confidential(sender, senderWallet.id))).toBe(Number(before) - 10);
    const escrow = (
      await api.get('/transactions/{id}', {
        params: { id: letter.escrow.transactionId },
        headers: sender.headers,
      })
    ).json().data.transaction;
    expect(escrow).toMatchObject({
      type: 'LETTER_ESCROW',
      status: 'CONFIRMED',
      amount: '10.00',
      metadata: { letterId: letter.id, leg: 'escrow' },
    });
    const reread = (
      await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })
    ).json().data.letter;
    expect(reread).toMatchObject({ amount: 'sealed', memo: 'sealed', claimCode: letter.claimCode });
  });

  it('keeps the claim code only hashed and sealed at rest', async () => {
    const letter = await createLetter();
    const row = await findLetterById(ctx.deps.database.db, letter.id);
    expect(JSON.stringify(row)).not.toContain(letter.claimCode);
    expect(JSON.stringify(row)).not.toContain(letter.claimCode.replaceAll('-', ''));
    expect(JSON.stringify(row)).not.toContain('For the engines');
  });

  it('refuses an amount the confidential balance cannot cover: 400 insufficient_balance', async () => {
    const response = await api.post('/transfer/letter', {
      body: {
        walletId: senderWallet.id,
        amount: '100000',
        recipient: RECIPIENT,
      },
      headers: sender.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'insufficient_balance' });
  });

  it.each([
    [{ amount: 10 }, 'invalid_amount'],
    [{ amount: '0' }, 'invalid_amount'],
    [{ memo: 'x'.repeat(501) }, 'validation_error'],
    [{ expiresInDays: 0 }, 'validation_error'],
    [{ expiresInDays: 366 }, 'validation_error'],
    [{ recipient: { ...RECIPIENT, address: { ...RECIPIENT.address, country: 'ZZ' } } }, 'validation_error'],
    [{ recipient: { name: 'x', address: { city: 'y', region: 'z', country: 'US' } } }, 'validation_error'],
    [{ claimOrigin: 'ftp://x' }, 'validation_error'],
  ])('answers %j with 400 %s', async (body, code) => {
    // Bodies the document refuses (an address without its first line among them): sent as written.
    const response = await api.raw('POST', '/transfer/letter', {
      payload: {
        walletId: senderWallet.id,
        amount: '1',
        recipient: RECIPIENT,
        ...body,
      },
      headers: sender.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code });
  });

  it("refuses another account's wallet (404 not_found) and an external wallet", async () => {
    expect(
      errorOf(
        await api.post('/transfer/letter', {
          body: {
            walletId: senderWallet.id,
            amount: '1',
            recipient: RECIPIENT,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 404, code: 'not_found' });
    const external = await createWallet(sender, {
      type: 'EXTERNAL',
      address: '0x00000000000000000000000000000000000000b1',
    });
    expect(
      errorOf(
        await api.post('/transfer/letter', {
          body: { walletId: external.id, amount: '1', recipient: RECIPIENT },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'wallet_not_custodial' });
  });

  it('answers a repeat with the same Idempotency-Key with the same letter, escrowed once; another body is 409', async () => {
    const key = `letter-${Date.now()}`;
    const body = { walletId: senderWallet.id, amount: '1.5', recipient: RECIPIENT };
    const before = await confidential(sender, senderWallet.id);
    const first = await api.post('/transfer/letter', {
      body,
      headers: sender.headers,
      idempotencyKey: key,
    });
    expect(first.statusCode, first.body).toBe(201);
    const again = await api.post('/transfer/letter', {
      body,
      headers: sender.headers,
      idempotencyKey: key,
    });
    expect(again.statusCode, again.body).toBe(201);
    const letter = first.json().data.letter;
    expect(again.json().data.letter).toMatchObject({
      id: letter.id,
      claimCode: letter.claimCode,
      escrow: { transactionId: letter.escrow.transactionId },
    });
    expect(Number(await confidential(sender, senderWallet.id))).toBeCloseTo(Number(before) - 1.5, 6);
    const escrows = (
      await api.get('/transactions', {
        query: { type: 'LETTER_ESCROW', pageSize: 100 },
        headers: sender.headers,
      })
    ).json().data.items;
    expect(
      escrows.filter((t: { metadata: { letterId: string } }) => t.metadata.letterId === letter.id),
    ).toHaveLength(1);
    // The key names one request: another body under it is refused, and nothing is escrowed for it.
    const other = await api.post('/transfer/letter', {
      body: { ...body, amount: '2' },
      headers: sender.headers,
      idempotencyKey: key,
    });
    expect(errorOf(other)).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    // A key used for a money movement is another request too.
    const fund = await api.post('/fund', {
      body: { walletId: senderWallet.id, amount: '1' },
      headers: sender.headers,
      idempotencyKey: `${key}-f`,
    });
    expect(fund.statusCode).toBe(201);
    const reused = await api.post('/transfer/letter', {
      body,
      headers: sender.headers,
      idempotencyKey: `${key}-f`,
    });
    expect(errorOf(reused)).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    expect(Number(await confidential(sender, senderWallet.id))).toBeCloseTo(Number(before) - 1.5, 6);
  });

  it('lists the sender letters newest first; another account sees none and reads 404 letter_not_found', async () => {
    const letter = await createLetter();
    const list = (
      await api.get('/transfer/letter', { query: { pageSize: 2 }, headers: sender.headers })
    ).json().data;
    expect(list).toMatchObject({ page: 1, pageSize: 2 });
    expect(list.total).toBeGreaterThanOrEqual(3);
    expect(list.items[0].id).toBe(letter.id);
    expect((await api.get('/transfer/letter', { headers: recipient.headers })).json().data.total).toBe(0);
    expect(
      errorOf(
        await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: recipient.headers }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
  });
});

describe('preview', () => {
  it('shows status, expiry, names and claimable, and nothing sealed, without authentication', async () => {
    const letter = await createLetter();
    const response = await api.get('/transfer/letter/preview', {
      query: { code: letter.claimCode.toLowerCase().replaceAll('-', ' ') },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.letter).toEqual({
      status: 'ESCROWED',
      expiresAt: letter.expiresAt,
      recipientName: 'Ada Lovelace',
      senderLabel: expect.any(String),
      amountVisibility: 'sealed',
      claimable: true,
    });
    expect(response.body).not.toContain('For the engines');
    expect(response.body).not.toContain('10.00');
  });

  it('answers a malformed code 400 invalid_claim_code and an unknown one 404 letter_not_found', async () => {
    expect(errorOf(await api.get('/transfer/letter/preview', { query: { code: 'short' } }))).toMatchObject({
      status: 400,
      code: 'invalid_claim_code',
    });
    expect(
      errorOf(await api.get('/transfer/letter/preview', { query: { code: '0'.repeat(28) } })),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
  });
});

describe('claim', () => {
  it('claims into a custodial wallet: CLAIMED, amount and memo revealed, code and URL null', async () => {
    const letter = await createLetter({ amount: '12.34', memo: 'Happy birthday' });
    const before = await confidential(recipient, recipientWallet.id);
    const response = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode.toLowerCase(),
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(response.statusCode, response.body).toBe(200);
    const { letter: claimed, transaction } = response.json().data;
    expect(claimed).toMatchObject({
      status: 'CLAIMED',
      amount: '12.34',
      memo: 'Happy birthday',
      claimCode: null,
      claimUrl: null,
    });
    expect(claimed.claim).toMatchObject({
      status: 'CONFIRMED',
      verified: true,
      walletAddress: recipientWallet.address,
      claimedAt: expect.stringMatching(/Z$/),
    });
    expect(transaction).toMatchObject({
      type: 'LETTER_CLAIM',
      status: 'CONFIRMED',
      walletId: recipientWallet.id,
      amount: '12.34',
      metadata: { letterId: letter.id, leg: 'claim' },
    });
    expect(transaction.counterparty).toContain(letter.id);
    expect(Number(await confidential(recipient, recipientWallet.id))).toBeCloseTo(Number(before) + 12.34, 6);
    // The sender now sees it claimed and revealed, without the code.
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })).json()
        .data.letter,
    ).toMatchObject({
      status: 'CLAIMED',
      amount: '12.34',
      claimCode: null,
    });
    // The same claimant repeating gets the existing claim; anyone else 409 already_claimed.
    const again = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().data.transaction.id).toBe(transaction.id);
    const otherWallet = await createWallet(recipient);
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: otherWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 409, code: 'already_claimed' });
    const third = await signup(ctx.app);
    const thirdWallet = await createWallet(third);
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: thirdWallet.id,
          },
          headers: third.headers,
        }),
      ),
    ).toMatchObject({ status: 409, code: 'already_claimed' });

    // Claims are per principal: another session of the same account, or one of its API keys, into the same wallet
    // is someone else.
    const secondSession = { ...recipient, headers: { cookie: await freshSession(recipient) } };
    const key = await apiKeyOf(ctx.app, recipient);
    for (const other of [secondSession, { ...recipient, headers: key.headers }]) {
      const answer = await api.post('/transfer/letter/claim', {
        body: {
          claimCode: letter.claimCode,
          walletId: recipientWallet.id,
        },
        headers: other.headers,
      });
      expect(errorOf(answer)).toMatchObject({ status: 409, code: 'already_claimed' });
    }
    // A claim recorded before principals were (migration 0009) stays its account's, into its wallet.
    await ctx.deps.database.db
      .update(letters)
      .set({ claimantPrincipal: null })
      .where(eq(letters.id, letter.id));
    const legacy = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: secondSession.headers,
    });
    expect(legacy.statusCode).toBe(200);
    expect(legacy.json().data.transaction.id).toBe(transaction.id);
  });

  it("gives an API key its claim back, and refuses the same account's session", async () => {
    const letter = await createLetter({ amount: '1' });
    const key = await apiKeyOf(ctx.app, recipient);
    const keyed = { ...recipient, headers: key.headers };
    const body = { claimCode: letter.claimCode, walletId: recipientWallet.id };
    const first = await api.post('/transfer/letter/claim', { body, headers: keyed.headers });
    expect(first.statusCode, first.body).toBe(200);
    const again = await api.post('/transfer/letter/claim', { body, headers: keyed.headers });
    expect(again.statusCode).toBe(200);
    expect(again.json().data.transaction.id).toBe(first.json().data.transaction.id);
    // A session of the same account (one of its own: the fixture's session spends its claim budget elsewhere).
    const session = { ...recipient, headers: { cookie: await freshSession(recipient) } };
    expect(
      errorOf(await api.post('/transfer/letter/claim', { body, headers: session.headers })),
    ).toMatchObject({
      status: 409,
      code: 'already_claimed',
    });
  });

  it("reads the claimant's own claim back by code; anyone else, and an unclaimed letter, read 404", async () => {
    const letter = await createLetter({ amount: '3.21', memo: 'Read me back' });
    const readClaim = (headers?: Record<string, string>) =>
      api.get('/transfer/letter/claim', { query: { code: letter.claimCode }, headers });
    // A claimant of its own: each claim spends one of an account's 10 claim attempts per 15 minutes.
    const claimant = await signup(ctx.app);
    const claimantWallet = await createWallet(claimant);
    // Not claimed yet: nobody has a claim to read, the sender included.
    expect(errorOf(await readClaim(claimant.headers))).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    expect(errorOf(await readClaim(sender.headers))).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: claimantWallet.id,
      },
      headers: claimant.headers,
    });
    expect(claim.statusCode, claim.body).toBe(200);
    const claimed = claim.json().data;

    // The claimant, with any spelling of the code and either credential, gets the claim as the claim answered it.
    const loose = letter.claimCode.toLowerCase().replaceAll('-', ' ');
    const withKey = { ...claimant, headers: (await apiKeyOf(ctx.app, claimant)).headers };
    for (const caller of [claimant, withKey]) {
      const response = await api.get('/transfer/letter/claim', {
        query: { code: loose },
        headers: caller.headers,
      });
      expect(response.statusCode, response.body).toBe(200);
      const { letter: own, transaction } = response.json().data;
      expect(own).toMatchObject({
        id: letter.id,
        status: 'CLAIMED',
        amount: '3.21',
        memo: 'Read me back',
        claimCode: null,
      });
      expect(own.claim).toMatchObject({
        transactionId: claimed.transaction.id,
        walletAddress: claimantWallet.address,
        claimedAt: claimed.letter.claim.claimedAt,
      });
      expect(transaction).toMatchObject({
        id: claimed.transaction.id,
        type: 'LETTER_CLAIM',
        direction: 'in',
        walletId: claimantWallet.id,
      });
    }
    // The sender and a third account do not see the claim; nor does an unauthenticated caller.
    expect(errorOf(await readClaim(sender.headers))).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    expect(errorOf(await readClaim(recipient.headers))).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    expect((await readClaim()).statusCode).toBe(401);
    // A malformed code is 400 invalid_claim_code, as for the claim itself.
    expect(
      errorOf(
        await api.get('/transfer/letter/claim', { query: { code: 'short' }, headers: claimant.headers }),
      ),
    ).toMatchObject({
      status: 400,
      code: 'invalid_claim_code',
    });
    // Reading claims nothing: the claim transaction is the same one.
    const again = (await readClaim(claimant.headers)).json().data;
    expect(again.transaction.id).toBe(claimed.transaction.id);
  });

  it('claims into an external (watch-only) wallet, with an API key', async () => {
    const letter = await createLetter({ amount: '3' });
    const external = await createWallet(recipient, {
      type: 'EXTERNAL',
      address: '0x00000000000000000000000000000000000000c1',
    });
    const key = await apiKeyOf(ctx.app, recipient);
    const response = await api.post('/transfer/letter/claim', {
      body: { claimCode: letter.claimCode, walletId: external.id },
      headers: key.headers,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().data.letter.claim.walletAddress.toLowerCase()).toBe(
      '0x00000000000000000000000000000000000000c1',
    );
  });

  it('lets exactly one of several concurrent claimants win', async () => {
    const letter = await createLetter({ amount: '1' });
    const claimants = await Promise.all([signup(ctx.app), signup(ctx.app), signup(ctx.app)]);
    const wallets = await Promise.all(claimants.map((caller) => createWallet(caller)));
    const responses = await Promise.all(
      claimants.map((caller, i) =>
        api.post('/transfer/letter/claim', {
          body: { claimCode: letter.claimCode, walletId: wallets[i].id },
          headers: caller.headers,
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409))
      expect(errorOf(response).code).toBe('already_claimed');
  });

  it('answers every error of the interface', async () => {
    const letter = await createLetter({ amount: '1' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: senderWallet.id,
          },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'cannot_claim_own_letter' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: 'ABCD-EFGH',
            walletId: recipientWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'invalid_claim_code' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: 'Z'.repeat(28),
            walletId: recipientWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 404, code: 'letter_not_found' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: senderWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 404, code: 'not_found' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: { claimCode: '', walletId: recipientWallet.id },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'validation_error' });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: recipientWallet.id,
          },
        }),
      ),
    ).toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('answers 503 escrow_vault_underfunded when the vault cannot cover the letter, which stays claimable', async () => {
    const letter = await createLetter({ amount: '2' });
    const network = ctx.deps.network;
    if (!network) throw new Error('no network');
    const row = await findLetterById(ctx.deps.database.db, letter.id);
    // Empty the vault's record of this letter behind the service's back.
    await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: network.contracts.letterVault,
      data: encodeLetterRefund(row?.vaultLetterId as Hex),
    });
    const response = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 503, code: 'escrow_vault_underfunded' });
    const after = (
      await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })
    ).json().data.letter;
    expect(after).toMatchObject({ status: 'ESCROWED', claim: null });
  });

  it('limits claim attempts to 10 per 15 minutes per principal and IP, apart from the write budget', async () => {
    const caller = await signup(ctx.app);
    const wallet = await createWallet(caller);
    toWindowStart(ctx.clock, 15 * 60_000);
    for (let i = 0; i < 10; i += 1) {
      const response = await api.post('/transfer/letter/claim', {
        body: {
          claimCode: 'Z'.repeat(28),
          walletId: wallet.id,
        },
        headers: caller.headers,
      });
      expect(response.statusCode).toBe(404);
      expect(response.headers['ratelimit-limit']).toBe('10');
    }
    const limited = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: 'Z'.repeat(28),
        walletId: wallet.id,
      },
      headers: caller.headers,
    });
    expect(errorOf(limited)).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(
      (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: caller.headers })).statusCode,
    ).toBe(201);
  });
});

/** Sessions last 24 h, so tests that move the clock by days act through API keys. */
async function keyed(caller: Caller): Promise<Caller> {
  const key = await apiKeyOf(ctx.app, caller);
  return { ...caller, headers: key.headers };
}

describe('void and expiry', () => {
  it('voids an ESCROWED letter and refunds the sending wallet; the code then gets 409 letter_not_claimable', async () => {
    const before = await confidential(sender, senderWallet.id);
    const letter = await createLetter({ amount: '7' });
    const response = await api.post('/transfer/letter/{id}/void', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.letter).toMatchObject({ status: 'VOIDED', refund: { reason: 'voided' } });
    const refunded = await waitForLetter(sender, letter.id, (l) => l.refund?.status === 'CONFIRMED');
    expect(refunded.refund).toMatchObject({ status: 'CONFIRMED', verified: true });
    expect(await confidential(sender, senderWallet.id)).toBe(before);
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: recipientWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 409, code: 'letter_not_claimable' });
    const again = await api.post('/transfer/letter/{id}/void', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(again.json().data.letter.status).toBe('VOIDED');
    // A voided letter is not mailed: its code no longer pays.
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/mail', {
          params: { id: letter.id },
          body: {},
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({
      status: 409,
      code: 'letter_not_claimable',
    });
  });

  it('refuses to void a claimed letter (409 already_claimed) or a stranger’s (404 letter_not_found)', async () => {
    const letter = await createLetter({ amount: '1' });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/void', {
          params: { id: letter.id },
          body: {},
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/void', {
          params: { id: letter.id },
          body: {},
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({
      status: 409,
      code: 'already_claimed',
    });
  });

  it('expires at expiresAt: a claim gets 410 letter_expired and the sender is refunded', async () => {
    const [senderKey, recipientKey] = [await keyed(sender), await keyed(recipient)];
    const before = await confidential(sender, senderWallet.id);
    const letter = await createLetter({ amount: '4', expiresInDays: 1 });
    ctx.clock.advance(86_400_000 + 1000);
    try {
      const response = await api.post('/transfer/letter/claim', {
        body: {
          claimCode: letter.claimCode,
          walletId: recipientWallet.id,
        },
        headers: recipientKey.headers,
      });
      expect(errorOf(response)).toMatchObject({ status: 410, code: 'letter_expired' });
      const expired = await waitForLetter(senderKey, letter.id, (l) => l.refund?.status === 'CONFIRMED');
      expect(expired).toMatchObject({ status: 'EXPIRED', refund: { reason: 'expired', verified: true } });
      expect(await confidential(senderKey, senderWallet.id)).toBe(before);
      expect(
        errorOf(
          await api.post('/transfer/letter/claim', {
            body: {
              claimCode: letter.claimCode,
              walletId: recipientWallet.id,
            },
            headers: recipientKey.headers,
          }),
        ),
      ).toMatchObject({ status: 410, code: 'letter_expired' });
      // An expired letter can be neither voided (its money is back already) nor mailed.
      for (const action of ['void', 'mail'] as const) {
        expect(
          errorOf(
            await api.post(`/transfer/letter/{id}/${action}`, {
              params: { id: letter.id },
              body: {},
              headers: senderKey.headers,
            }),
          ),
          action,
        ).toMatchObject({
          status: 409,
          code: 'letter_not_claimable',
        });
      }
    } finally {
      ctx.clock.advance(-(86_400_000 + 1000));
    }
  });

  it('the sweep needs the shared secret, then expires due letters and refunds them', async () => {
    expect(
      errorOf(await api.post('/transfer/letter/sweep', { headers: { 'x-sweep-secret': 'wrong' } })),
    ).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(errorOf(await api.post('/transfer/letter/sweep'))).toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
    const senderKey = await keyed(sender);
    const letter = await createLetter({ amount: '1', expiresInDays: 2 });
    ctx.clock.advance(2 * 86_400_000 + 1000);
    try {
      const response = await api.post('/transfer/letter/sweep', {
        headers: {
          'x-sweep-secret': 'operator-sweep-secret',
        },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().data.expired).toBeGreaterThanOrEqual(1);
      const expired = await waitForLetter(senderKey, letter.id, (l) => l.refund?.status === 'CONFIRMED');
      expect(expired.status).toBe('EXPIRED');
    } finally {
      ctx.clock.advance(-(2 * 86_400_000 + 1000));
    }
  });
});

describe('sweep configuration', () => {
  it('answers 503 naming SWEEP_SECRET while it is not set', async () => {
    const bare = await createTestContext();
    try {
      const response = await apiOf(bare.app).post('/transfer/letter/sweep', {
        headers: { 'x-sweep-secret': 'anything' },
      });
      expect(errorOf(response)).toMatchObject({
        status: 503,
        code: 'configuration_missing',
        details: { variable: 'SWEEP_SECRET' },
      });
    } finally {
      await bare.close();
    }
  });
});

describe('sweep timer', () => {
  it('never overlaps itself: a run slower than the interval delays the next; a failed run does not stop it', async () => {
    let active = 0;
    let mostAtOnce = 0;
    let runs = 0;
    const failures: unknown[] = [];
    const slowSweep = async () => {
      runs += 1;
      active += 1;
      mostAtOnce = Math.max(mostAtOnce, active);
      await new Promise((resolve) => setTimeout(resolve, 60));
      active -= 1;
      if (runs === 1) throw new Error('the first sweep fails');
      return { expired: 0, refunded: 0, reconciled: 0 };
    };
    const logger = { info: () => {}, warn: () => {}, error: (entry: unknown) => failures.push(entry) };
    const stop = startLetterSweeper(ctx.deps, logger, { intervalMs: 5, sweep: slowSweep });
    // At least three runs, however slow the machine (a fixed wait counted them on a stalled one too).
    for (const deadline = Date.now() + 10_000; runs < 3 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await stop();
    expect(active).toBe(0);
    expect(mostAtOnce).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(3);
    expect(failures).toHaveLength(1);
    const stoppedAt = runs;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runs).toBe(stoppedAt);
  });
});

describe('printable letter', () => {
  it('serves the sender a one-page PDF with the claim code and no amount or memo', async () => {
    const letter = await createLetter({ amount: '6.66', memo: 'Secret memo text' });
    const response = await api.get('/transfer/letter/{id}/pdf', {
      params: { id: letter.id },
      headers: sender.headers,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(response.rawPayload.toString('latin1')).not.toContain('Secret memo text');
    expect(
      errorOf(
        await api.get('/transfer/letter/{id}/pdf', { params: { id: letter.id }, headers: recipient.headers }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(
      errorOf(
        await api.get('/transfer/letter/{id}/pdf', { params: { id: letter.id }, headers: sender.headers }),
      ),
    ).toMatchObject({
      status: 409,
      code: 'letter_not_claimable',
    });
  });
});

describe('mail', () => {
  const US_RECIPIENT = {
    name: 'Grace Hopper',
    address: { line1: '1 Navy Way', city: 'Arlington', region: 'VA', postal: '22202', country: 'US' },
  };

  it('mails an escrowed letter through the local print sandbox: MAILED with the mail block, test mode', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    const response = await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {
        deliveryMethod: 'tracked',
        provider: 'printer',
      },
      headers: sender.headers,
    });
    expect(response.statusCode, response.body).toBe(200);
    const mailed = response.json().data.letter;
    expect(mailed.status).toBe('MAILED');
    expect(mailed.isDomestic).toBe(true);
    expect(mailed.mail).toEqual({
      provider: 'printer',
      providerId: expect.any(String),
      deliveryMethod: 'tracked',
      status: expect.any(String),
      trackingNumber: expect.any(String),
      expectedDeliveryDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      mailedAt: expect.stringMatching(/Z$/),
      testMode: true,
    });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/mail', {
          params: { id: letter.id },
          body: { deliveryMethod: 'tracked' },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 409, code: 'letter_already_mailed' });
    // A mailed letter is still claimable.
    const claim = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: recipientWallet.id,
      },
      headers: recipient.headers,
    });
    expect(claim.json().data.letter.status).toBe('CLAIMED');
  });

  it('standard mail has no tracking number; an empty body means standard', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    const response = await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(response.json().data.letter.mail).toMatchObject({
      deliveryMethod: 'standard',
      trackingNumber: null,
    });
  });

  it('refuses courier (400 delivery_method_unavailable), an http claim origin (400 claim_origin_not_public) and strangers', async () => {
    const httpLetter = await createLetter({ recipient: US_RECIPIENT });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/mail', {
          params: { id: httpLetter.id },
          body: { deliveryMethod: 'courier' },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'delivery_method_unavailable' });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/mail', {
          params: { id: httpLetter.id },
          body: { deliveryMethod: 'standard' },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'claim_origin_not_public' });
    expect(
      errorOf(
        // A delivery method the document does not list: sent as written.
        await api.raw('POST', `/transfer/letter/${httpLetter.id}/mail`, {
          payload: { deliveryMethod: 'pigeon' },
          headers: sender.headers,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'validation_error' });
    expect(
      errorOf(
        await api.post('/transfer/letter/{id}/mail', {
          params: { id: httpLetter.id },
          body: {},
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({
      status: 404,
      code: 'letter_not_found',
    });
    expect(
      (
        await api.get('/transfer/letter/{id}', { params: { id: httpLetter.id }, headers: sender.headers })
      ).json().data.letter.status,
    ).toBe('ESCROWED');
  });

  it('records a provider rejection on the letter, which stays ESCROWED', async () => {
    // The sandbox rejects, as the real provider does, a US address without a ZIP code.
    const letter = await createLetter({
      recipient: {
        name: 'No Zip',
        address: { line1: '1 Main St', city: 'Springfield', region: 'IL', country: 'US' },
      },
      claimOrigin: 'https://pay.example.com',
    });
    const response = await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(errorOf(response)).toMatchObject({ code: 'postage_unavailable' });
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })).json()
        .data.letter,
    ).toMatchObject({
      status: 'ESCROWED',
      mail: null,
      error: 'Mailing failed (postage_unavailable): A US address needs a valid ZIP code.',
    });
    const row = await findLetterById(ctx.deps.database.db, letter.id);
    expect(row?.mailAttempts).toHaveLength(1);
  });

  it('a provider out of reach is a retryable 500 recorded on the letter; the retry adopts the mailing, once', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    const provider = ctx.deps.mail as PrintProvider;
    const unreachable = () =>
      new AppError(
        'upstream_error',
        'The print provider could not be reached; the same request may be retried.',
      );
    let accepted: MailResult | undefined;
    const outages: PrintProvider[] = [
      // The request never reaches the provider.
      {
        ...provider,
        send: async () => {
          throw unreachable();
        },
      },
      // The provider accepts the letter and the answer is lost.
      {
        ...provider,
        send: async (request) => {
          accepted = await provider.send(request);
          throw unreachable();
        },
      },
    ];
    try {
      for (const outage of outages) {
        Object.assign(ctx.deps, { mail: outage });
        const failed = await api.post('/transfer/letter/{id}/mail', {
          params: { id: letter.id },
          body: {},
          headers: sender.headers,
        });
        expect(errorOf(failed)).toMatchObject({
          status: 500,
          code: 'internal_error',
          details: { letterId: letter.id, retryable: true },
        });
        expect(
          (
            await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })
          ).json().data.letter,
        ).toMatchObject({
          status: 'ESCROWED',
          mail: null,
          error:
            'Mailing failed (upstream_error): The print provider could not be reached; the same request may be retried.',
        });
      }
    } finally {
      Object.assign(ctx.deps, { mail: provider });
    }
    const retried = await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json().data.letter).toMatchObject({ status: 'MAILED', error: null });
    expect(retried.json().data.letter.mail.providerId).toBe(accepted?.providerId);
    expect((await findLetterById(ctx.deps.database.db, letter.id))?.mailAttempts).toHaveLength(2);
  });

  it('voids a mailed letter only with acknowledgeMailed: true; the paper code then stops working', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    for (const body of [{}, { acknowledgeMailed: false }]) {
      expect(
        errorOf(
          await api.post('/transfer/letter/{id}/void', {
            params: { id: letter.id },
            body,
            headers: sender.headers,
          }),
        ),
      ).toMatchObject({
        status: 400,
        code: 'void_requires_acknowledgement',
      });
    }
    const voided = await api.post('/transfer/letter/{id}/void', {
      params: { id: letter.id },
      body: { acknowledgeMailed: true },
      headers: sender.headers,
    });
    expect(voided.json().data.letter).toMatchObject({ status: 'VOIDED', refund: { reason: 'voided' } });
    expect(
      errorOf(
        await api.post('/transfer/letter/claim', {
          body: {
            claimCode: letter.claimCode,
            walletId: recipientWallet.id,
          },
          headers: recipient.headers,
        }),
      ),
    ).toMatchObject({ status: 409, code: 'letter_not_claimable' });
  });

  it('a mailed letter voided before it was posted reads mail.status cancelled, in the answer and after', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    const mailed = await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    expect(mailed.json().data.letter.mail).toMatchObject({ status: 'created' });
    const voided = await api.post('/transfer/letter/{id}/void', {
      params: { id: letter.id },
      body: { acknowledgeMailed: true },
      headers: sender.headers,
    });
    expect(voided.statusCode, voided.body).toBe(200);
    expect(voided.json().data.letter).toMatchObject({ status: 'VOIDED', mail: { status: 'cancelled' } });
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })).json()
        .data.letter,
    ).toMatchObject({
      status: 'VOIDED',
      mail: { status: 'cancelled', providerId: mailed.json().data.letter.mail.providerId },
    });
  });

  it('a mailed letter whose mailing the provider could not cancel keeps the provider’s word', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    await api.post('/transfer/letter/{id}/mail', {
      params: { id: letter.id },
      body: {},
      headers: sender.headers,
    });
    const provider = ctx.deps.mail as PrintProvider;
    Object.assign(ctx.deps, {
      mail: { ...provider, cancel: async () => ({ cancelled: false, reason: 'already in_transit' }) },
    });
    try {
      const voided = await api.post('/transfer/letter/{id}/void', {
        params: { id: letter.id },
        body: { acknowledgeMailed: true },
        headers: sender.headers,
      });
      expect(voided.json().data.letter).toMatchObject({ status: 'VOIDED', mail: { status: 'created' } });
    } finally {
      Object.assign(ctx.deps, { mail: provider });
    }
  });

  it('mail and void take no body at all, an empty JSON body, or {} alike', async () => {
    const bodies: Array<{ payload?: string; headers: Record<string, string> }> = [
      { headers: {} },
      { payload: '', headers: { 'content-type': 'application/json' } },
      { payload: '{}', headers: { 'content-type': 'application/json' } },
    ];
    for (const body of bodies) {
      const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
      // Bodies as raw bytes, a content type with none among them: sent as written.
      const send = (action: string) =>
        api.raw('POST', `/transfer/letter/${letter.id}/${action}`, {
          headers: { ...sender.headers, ...body.headers },
          ...(body.payload === undefined ? {} : { payload: body.payload }),
        });
      const mailed = await send('mail');
      expect(mailed.statusCode, mailed.body).toBe(200);
      expect(mailed.json().data.letter.mail.deliveryMethod).toBe('standard');
      // Without the acknowledgement a mailed letter is not voided: the body's absence is not a yes.
      expect(errorOf(await send('void'))).toMatchObject({ code: 'void_requires_acknowledgement' });
    }
  });

  it('takes only a JSON boolean as the acknowledgement: "true" and 1 are not true', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    await api.post('/transfer/letter/{id}/mail', { params: { id: letter.id }, headers: sender.headers });
    for (const acknowledgeMailed of ['true', 1, 'yes']) {
      // Not a boolean, as the document asks: sent as written.
      const refused = errorOf(
        await api.raw('POST', `/transfer/letter/${letter.id}/void`, {
          payload: { acknowledgeMailed },
          headers: sender.headers,
        }),
      );
      expect(refused).toMatchObject({ status: 400, code: 'validation_error' });
    }
    expect(
      (await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: sender.headers })).json()
        .data.letter.status,
    ).toBe('MAILED');
  });

  it('answers 503 mail_provider_not_configured where no provider is set up', async () => {
    const letter = await createLetter({ recipient: US_RECIPIENT, claimOrigin: 'https://pay.example.com' });
    const provider = ctx.deps.mail;
    Object.assign(ctx.deps, { mail: null });
    try {
      expect(
        errorOf(
          await api.post('/transfer/letter/{id}/mail', {
            params: { id: letter.id },
            body: {},
            headers: sender.headers,
          }),
        ),
      ).toMatchObject({
        status: 503,
        code: 'mail_provider_not_configured',
      });
    } finally {
      Object.assign(ctx.deps, { mail: provider });
    }
  });
});

describe('mail tracking', () => {
  it('refreshes a mailed letter from the provider at most every 15 minutes', async () => {
    const letter = await createLetter({
      recipient: {
        name: 'Track Me',
        address: { line1: '1 Navy Way', city: 'Arlington', region: 'VA', postal: '22202', country: 'US' },
      },
      claimOrigin: 'https://pay.example.com',
    });
    const senderKey = await apiKeyOf(ctx.app, sender);
    const mailed = (
      await api.post('/transfer/letter/{id}/mail', {
        params: { id: letter.id },
        body: {},
        headers: sender.headers,
      })
    ).json().data.letter;
    const caller = { ...sender, headers: senderKey.headers };
    ctx.clock.advance(3 * 86_400_000);
    try {
      const later = (
        await api.get('/transfer/letter/{id}', { params: { id: letter.id }, headers: caller.headers })
      ).json().data.letter;
      expect(later.mail.status).not.toBe(mailed.mail.status);
      expect(later.mail.providerId).toBe(mailed.mail.providerId);
    } finally {
      ctx.clock.advance(-3 * 86_400_000);
    }
  });
});
