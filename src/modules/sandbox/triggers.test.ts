/**
 * The sandbox's magic amounts and the test clock, end to end through the API on the embedded chain with the worker
 * running: each outcome comes out of the real code path (the worker's pre-flight, the inline driver, the claim).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  type Caller,
  createTestContext,
  errorOf,
  sessionCookieOf,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import type { TransactionRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { sandboxTriggerOf } from '../../lib/sandbox-triggers.ts';
import { findTransactionById } from '../../worker/outbox.repository.ts';
import { sandboxTrigger } from '../../worker/sandbox-faults.ts';

const SECRET = 'operator-sweep-secret';
const DAY = 86_400;
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

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let sender: Caller;
let senderWallet: { id: string; address: string };
let recipient: Caller;
let recipientWallet: { id: string; address: string };

async function balances(caller: Caller, walletId: string) {
  const balance = (await api.get('/balances', { query: { walletId }, headers: caller.headers })).json().data
    .balances[0];
  return { confidential: balance.confidential.amount as string, normal: balance.normal.amount as string };
}

async function queued(
  path: '/fund' | '/mint' | '/transfer' | '/redeem',
  body: { amount: string; to?: string },
) {
  const response = await api.post(path, {
    body: { walletId: senderWallet.id, ...body },
    headers: sender.headers,
  });
  expect(response.statusCode, response.body).toBe(201);
  const transaction = response.json().data.transaction;
  expect(transaction.status).toBe('QUEUED');
  return transaction as { id: string; amount: string };
}

async function createLetter(amount: string, extra: { expiresInDays?: number } = {}) {
  return api.post('/transfer/letter', {
    body: {
      walletId: senderWallet.id,
      amount,
      recipient: RECIPIENT,
      ...extra,
    },
    headers: sender.headers,
  });
}

async function claim(claimCode: string) {
  return api.post('/transfer/letter/claim', {
    body: { claimCode, walletId: recipientWallet.id },
    headers: recipient.headers,
  });
}

async function letterOf(id: string) {
  return (await api.get('/transfer/letter/{id}', { params: { id }, headers: sender.headers })).json().data
    .letter;
}

async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: {
      RATE_LIMIT_READS_PER_MINUTE: '100000',
      RATE_LIMIT_WRITES_PER_MINUTE: '100000',
      RATE_LIMIT_CLAIMS_PER_15_MINUTES: '1000',
      SWEEP_SECRET: SECRET,
    },
  });
  sender = await signup(ctx.app);
  recipient = await signup(ctx.app);
  senderWallet = (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: sender.headers })).json()
    .data.wallet;
  recipientWallet = (
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: recipient.headers })
  ).json().data.wallet;
  const fund = await queued('/fund', { amount: '500' });
  expect((await waitForStatus(ctx.app, sender.headers, fund.id, undefined, 120_000)).status).toBe(
    'CONFIRMED',
  );
  const mint = await queued('/mint', { amount: '200' });
  expect((await waitForStatus(ctx.app, sender.headers, mint.id, undefined, 120_000)).status).toBe(
    'CONFIRMED',
  );
}, 300_000);
afterAll(() => ctx?.close());

describe('magic amounts on /fund, /mint, /transfer, /redeem', () => {
  it('…402: QUEUED, then FAILED with the operation’s own code, nothing moved', async () => {
    const before = await balances(sender, senderWallet.id);
    const cases = [
      ['/fund', {}, 'faucet_failed'],
      ['/mint', {}, 'mint_failed'],
      ['/transfer', { to: recipientWallet.address }, 'transfer_failed'],
      ['/redeem', {}, 'redeem_failed'],
    ] as const;
    for (const [path, body, code] of cases) {
      const row = await queued(path, { amount: '1.000402', ...body });
      expect(row.amount).toBe('1.000402');
      const failed = await waitForStatus(ctx.app, sender.headers, row.id, undefined, 60_000);
      expect(failed, path).toMatchObject({ status: 'FAILED', errorCode: code, txHash: null });
    }
    expect(await balances(sender, senderWallet.id)).toEqual(before);
  }, 240_000);

  it('…429: stays QUEUED through transient faults for 30 s, then completes moving the amount given', async () => {
    const before = await balances(recipient, recipientWallet.id);
    const row = await queued('/transfer', { to: recipientWallet.address, amount: '1.000429' });
    // Attempted and put off, never failed: still QUEUED seconds later.
    const row0 = await until(
      'the first attempt',
      async () => (await findTransactionById(ctx.deps.database.db, row.id)) as TransactionRow,
      (current) => current.attempts > 0,
    );
    expect(row0.status).toBe('QUEUED');
    expect(row0.nextAttemptAt.getTime()).toBe(row0.createdAt.getTime() + 30_000);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(
      (await api.get('/transactions/{id}', { params: { id: row.id }, headers: sender.headers })).json().data
        .transaction.status,
    ).toBe('QUEUED');
    // The fault's 30 s pass on the service's clock: the test clock moves them past, and the row completes.
    expect(
      (
        await api.post('/sandbox/clock', {
          body: { advanceSeconds: 30 },
          headers: { 'x-sweep-secret': SECRET },
        })
      ).statusCode,
    ).toBe(200);
    const done = await waitForStatus(ctx.app, sender.headers, row.id, undefined, 120_000);
    expect(done).toMatchObject({ status: 'CONFIRMED', amount: '1.000429' });
    const after = await balances(recipient, recipientWallet.id);
    expect(Number(after.confidential) - Number(before.confidential)).toBeCloseTo(1.000429, 6);
  }, 240_000);
});

describe('magic amounts of letters', () => {
  it('…502: the first claim is 502 claim_failed, the letter stays claimable, the next claim succeeds', async () => {
    const created = await createLetter('2.000502');
    expect(created.statusCode, created.body).toBe(201);
    const letter = created.json().data.letter;
    const before = await balances(recipient, recipientWallet.id);
    const first = await claim(letter.claimCode);
    expect(errorOf(first)).toMatchObject({ status: 502, code: 'claim_failed' });
    expect((await letterOf(letter.id)).status).toBe('ESCROWED');
    expect(await balances(recipient, recipientWallet.id)).toEqual(before);
    const second = await claim(letter.claimCode);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().data.letter.status).toBe('CLAIMED');
    const after = await balances(recipient, recipientWallet.id);
    expect(Number(after.confidential) - Number(before.confidential)).toBeCloseTo(2.000502, 6);
  }, 180_000);

  it('…503: the first claim is 503 escrow_vault_underfunded, the letter stays claimable, the next succeeds', async () => {
    const letter = (await createLetter('2.000503')).json().data.letter;
    const first = await claim(letter.claimCode);
    expect(errorOf(first)).toMatchObject({ status: 503, code: 'escrow_vault_underfunded' });
    expect((await letterOf(letter.id)).status).toBe('ESCROWED');
    const second = await claim(letter.claimCode);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().data.letter.status).toBe('CLAIMED');
  }, 180_000);

  it('…504: the claim is 502 claim_unsettled {letterId, txHash}, then completes for that claimant', async () => {
    const letter = (await createLetter('2.000504')).json().data.letter;
    const before = await balances(recipient, recipientWallet.id);
    const first = await claim(letter.claimCode);
    const error = errorOf(first);
    expect(error).toMatchObject({ status: 502, code: 'claim_unsettled', details: { letterId: letter.id } });
    const { txHash } = error.details as { txHash: string };
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Held for that claimant: another account is refused, the claimant asking again is told the same.
    const other = await signup(ctx.app);
    const otherWallet = (
      await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: other.headers })
    ).json().data.wallet;
    const stolen = await api.post('/transfer/letter/claim', {
      body: {
        claimCode: letter.claimCode,
        walletId: otherWallet.id,
      },
      headers: other.headers,
    });
    expect(errorOf(stolen)).toMatchObject({ status: 409, code: 'already_claimed' });
    // The reconciliation (the operator's sweep, which the worker also runs every minute) lands the bookkeeping.
    const sweep = await api.post('/transfer/letter/sweep', { headers: { 'x-sweep-secret': SECRET } });
    expect(sweep.json().data.reconciled).toBeGreaterThanOrEqual(1);
    const again = await claim(letter.claimCode);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ letter: { status: 'CLAIMED' }, transaction: { txHash } });
    const after = await balances(recipient, recipientWallet.id);
    expect(Number(after.confidential) - Number(before.confidential)).toBeCloseTo(2.000504, 6);
  }, 180_000);

  it('…505: creation is 502 escrow_unsettled {letterId, txHash}; the letter reads ESCROWED later', async () => {
    const key = `unsettled-${Date.now()}`;
    const body = { walletId: senderWallet.id, amount: '2.000505', recipient: RECIPIENT };
    const created = await api.post('/transfer/letter', {
      body,
      headers: sender.headers,
      idempotencyKey: key,
    });
    const error = errorOf(created);
    expect(error).toMatchObject({ status: 502, code: 'escrow_unsettled' });
    const { letterId, txHash } = error.details as { letterId: string; txHash: string };
    expect(txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Asked again under the same key (a client that lost the answer), it follows the same letter: none is added.
    const repeated = await api.post('/transfer/letter', {
      body,
      headers: sender.headers,
      idempotencyKey: key,
    });
    const same =
      repeated.statusCode === 201
        ? repeated.json().data.letter.id
        : (errorOf(repeated).details as { letterId: string }).letterId;
    expect(same).toBe(letterId);
    const letter = await until(
      'the escrow',
      () => letterOf(letterId),
      (read) => read.status === 'ESCROWED',
    );
    expect(letter.escrow).toMatchObject({ txHash });
  }, 180_000);
});

describe('the test clock expires a letter', () => {
  it('past expiresAt: the claim is 410 letter_expired and the amount goes back to the sender', async () => {
    const letter = (await createLetter('3', { expiresInDays: 1 })).json().data.letter;
    const before = await balances(sender, senderWallet.id);
    const moved = await api.post('/sandbox/clock', {
      body: { advanceSeconds: DAY + 60 },
      headers: { 'x-sweep-secret': SECRET },
    });
    expect(moved.statusCode).toBe(200);
    expect(Date.parse(moved.json().data.now)).toBeGreaterThan(Date.parse(letter.expiresAt));
    // A day on, the sessions have ended too (24 hours): both log in again.
    expect(errorOf(await api.get('/me', { headers: recipient.headers }))).toMatchObject({
      status: 401,
      code: 'session_expired',
    });
    for (const caller of [sender, recipient]) {
      const login = await api.post('/auth/login', {
        body: { email: caller.email, password: caller.password },
      });
      caller.headers = { cookie: sessionCookieOf(login.headers['set-cookie']) };
    }
    expect(errorOf(await claim(letter.claimCode))).toMatchObject({ status: 410, code: 'letter_expired' });
    const refunded = await until(
      'the refund',
      () => letterOf(letter.id),
      (read) => read.refund?.status === 'CONFIRMED',
    );
    expect(refunded.status).toBe('EXPIRED');
    const after = await balances(sender, senderWallet.id);
    expect(Number(after.confidential) - Number(before.confidential)).toBeCloseTo(3, 6);
  }, 180_000);
});

describe('magic amounts are sandbox only', () => {
  const row = (amount: string) => ({ type: 'TRANSFER', amount }) as TransactionRow;
  it('reads the last three of six decimals, in the sandbox alone', () => {
    expect(sandboxTriggerOf(1_000_402n)).toBe('fail');
    expect(sandboxTriggerOf(429n)).toBe('transient');
    expect(sandboxTriggerOf(7_000_505n)).toBe('escrow_unsettled');
    expect(sandboxTriggerOf(1_004_020n)).toBeNull();
    expect(sandboxTriggerOf(1_000_000n)).toBeNull();
    const sandbox = { config: { environment: 'sandbox' } } as Deps;
    const production = { config: { environment: 'production' } } as Deps;
    expect(sandboxTrigger(sandbox, row('1000402'))).toBe('fail');
    for (const amount of ['1000402', '1000429', '1000502', '1000503', '1000504', '1000505']) {
      expect(sandboxTrigger(production, row(amount))).toBeNull();
    }
  });
});
