import { createPublicKey, randomBytes, verify } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { Address, Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import { chainSubmissions } from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';
import { createKeyring } from '../../lib/secrets.ts';
import { encodeNota, type Nota, notaSigningKey, signNota } from '../notas/nota.ts';
import { insertTransaction } from '../transactions/transactions.repository.ts';

const canonicalize = (
  typeof canonicalizeModule === 'function'
    ? canonicalizeModule
    : (canonicalizeModule as unknown as { default: unknown }).default
) as (input: unknown) => string;

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
let aliceWallet: { id: string; address: Address };
let confirmed: { id: string; txHash: string; status: string };
let failedFund: { id: string; status: string; errorCode: string; txHash: null };

function getNota(headers: Record<string, string>, id: string) {
  return api.get('/transactions/{id}/nota', { params: { id }, headers });
}

function decode(nota: string): Nota {
  return JSON.parse(Buffer.from(nota, 'base64url').toString('utf8'));
}

/** Offline verification, as a third party would do it: the published JWK, RFC 8785, node:crypto. */
async function verifyOffline(nota: Nota): Promise<boolean> {
  const keys = (await api.get('/notas/keys')).json().data.keys as Array<{
    keyId: string;
    jwk: Record<string, string>;
  }>;
  const published = keys.find((key) => key.keyId === nota.signature?.keyId);
  if (!published || !nota.signature) return false;
  const { signature, ...unsigned } = nota;
  return verify(
    null,
    Buffer.from(canonicalize(unsigned), 'utf8'),
    createPublicKey({ key: published.jwk, format: 'jwk' }),
    Buffer.from(signature.value, 'base64url'),
  );
}

/** A row the worker will not pick up for a long time: its state stays as written. */
async function insertRow(values: {
  status: 'QUEUED' | 'PENDING' | 'FAILED';
  txHash?: Hex | null;
  blockNumber?: bigint | null;
  blockHash?: Hex | null;
  logIndex?: number | null;
}) {
  return insertTransaction(ctx.deps.database.db, {
    id: newId(),
    userId: alice.userId,
    walletId: aliceWallet.id,
    type: 'TRANSFER',
    direction: 'out',
    status: values.status,
    chainId: 31337,
    amount: '1000000',
    token: 'cSTABLE',
    fromAddress: aliceWallet.address,
    toAddress: '0x000000000000000000000000000000000000dEaD',
    txHash: values.txHash ?? null,
    blockNumber: values.blockNumber ?? null,
    blockHash: values.blockHash ?? null,
    logIndex: values.logIndex ?? null,
    error:
      values.status === 'FAILED' ? 'The confidential balance was too low: the transfer moved nothing.' : null,
    errorCode: values.status === 'FAILED' ? 'transfer_failed' : null,
    nextAttemptAt: new Date('2100-01-01T00:00:00.000Z'),
  });
}

function hash(): Hex {
  return `0x${randomBytes(32).toString('hex')}`;
}

beforeAll(async () => {
  ctx = await createTestContext({
    worker: true,
    env: { RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
  });
  alice = await signup(ctx.app);
  bob = await signup(ctx.app);
  const created = await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: alice.headers });
  expect(created.statusCode).toBe(201);
  aliceWallet = created.json().data.wallet;
  const fund = await api.post('/fund', {
    body: { walletId: aliceWallet.id, amount: '1000' },
    headers: alice.headers,
  });
  expect(fund.statusCode).toBe(201);
  confirmed = await waitForStatus(ctx.app, alice.headers, fund.json().data.transaction.id);
  expect(confirmed.status).toBe('CONFIRMED');
  const over = await api.post('/fund', {
    body: { walletId: aliceWallet.id, amount: '1' },
    headers: alice.headers,
  });
  failedFund = await waitForStatus(ctx.app, alice.headers, over.json().data.transaction.id);
  expect(failedFund).toMatchObject({ status: 'FAILED', errorCode: 'faucet_cap_exceeded', txHash: null });
});
afterAll(() => ctx.close());

describe('GET /transactions/{id}/nota', () => {
  it('issues a signed receipt of a confirmed fund that verifies offline with the published key', async () => {
    const response = await getNota(alice.headers, confirmed.id);
    expect(response.statusCode).toBe(200);
    const { filename, nota } = response.json().data;
    expect(filename).toBe(`sealpay-receipt-${confirmed.id}.nota`);
    expect(nota).toMatch(/^[A-Za-z0-9_-]+$/);
    const document = decode(nota);
    const shown = (
      await api.get('/transactions/{id}', { params: { id: confirmed.id }, headers: alice.headers })
    ).json().data.transaction;
    expect(document).toMatchObject({
      nota: 1,
      kind: 'receipt',
      issuedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      signature: { alg: 'Ed25519', keyId: expect.any(String), value: expect.any(String) },
    });
    expect(Object.keys(document).sort()).toEqual(['issuedAt', 'kind', 'nota', 'payload', 'signature']);
    expect(document.payload).toEqual({
      ...shown,
      chainId: shown.chainId,
      blockNumber: expect.any(Number),
      blockHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      logIndex: expect.any(Number),
    });
    expect(document.payload.blockNumber).toBeGreaterThan(0);
    expect(document.payload.txHash).toBe(confirmed.txHash);
    expect(Buffer.from(document.signature?.value ?? '', 'base64url')).toHaveLength(64);
    expect(await verifyOffline(document)).toBe(true);
  });

  it('fails offline verification when one byte of the payload changes', async () => {
    const document = decode((await getNota(alice.headers, confirmed.id)).json().data.nota);
    expect(document.payload.amount).toBe('1000.00');
    const tampered = { ...document, payload: { ...document.payload, amount: '1000.01' } };
    expect(await verifyOffline(tampered)).toBe(false);
    const retimed = {
      ...document,
      issuedAt: document.issuedAt.replace(/\d(?=Z$)/, (d) => String((+d + 1) % 10)),
    };
    expect(await verifyOffline(retimed)).toBe(false);
    expect(await verifyOffline(document)).toBe(true);
  });

  it('answers either credential: an API key gets the receipt too', async () => {
    const key = await apiKeyOf(ctx.app, alice);
    const response = await getNota(key.headers, confirmed.id);
    expect(response.statusCode).toBe(200);
    expect(decode(response.json().data.nota).payload.id).toBe(confirmed.id);
    expect(errorOf(await getNota({}, confirmed.id))).toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('is 409 receipt_unavailable (retryable) while the transaction is QUEUED', async () => {
    const row = await insertRow({ status: 'QUEUED' });
    expect(errorOf(await getNota(alice.headers, row.id))).toEqual({
      status: 409,
      code: 'receipt_unavailable',
      message: expect.any(String),
      details: { status: 'QUEUED', retryable: true },
    });
  });

  it('is 409 receipt_unavailable (retryable) while PENDING with a hash but no block', async () => {
    const row = await insertRow({ status: 'PENDING', txHash: hash() });
    expect(errorOf(await getNota(alice.headers, row.id))).toMatchObject({
      status: 409,
      code: 'receipt_unavailable',
      details: { status: 'PENDING', retryable: true },
    });
  });

  it('is 400 receipt_unavailable (not retryable) for a fund that FAILED before submission', async () => {
    expect(errorOf(await getNota(alice.headers, failedFund.id))).toEqual({
      status: 400,
      code: 'receipt_unavailable',
      message: expect.any(String),
      details: { status: 'FAILED', retryable: false },
    });
  });

  it('issues a receipt for a FAILED transaction that did reach the chain', async () => {
    const txHash = hash();
    const blockHash = hash();
    const withBlock = await insertRow({ status: 'FAILED', txHash, blockNumber: 7n, blockHash, logIndex: 2 });
    const response = await getNota(alice.headers, withBlock.id);
    expect(response.statusCode).toBe(200);
    const document = decode(response.json().data.nota);
    expect(document.payload).toMatchObject({
      status: 'FAILED',
      errorCode: 'transfer_failed',
      txHash,
      blockNumber: 7,
      blockHash,
      logIndex: 2,
    });
    expect(await verifyOffline(document)).toBe(true);

    // The row kept no block, but its mined submission did: the receipt takes the block from there.
    const minedHash = hash();
    const minedBlock = hash();
    const row = await insertRow({ status: 'FAILED', txHash: minedHash });
    await ctx.deps.database.db.insert(chainSubmissions).values({
      id: newId(),
      transactionId: row.id,
      purpose: 'transfer',
      fromAddress: '0x00000000000000000000000000000000000000aa',
      nonce: 0,
      rawTx: '0x00',
      txHash: minedHash,
      status: 'MINED',
      blockNumber: 9n,
      blockHash: minedBlock,
    });
    const fromSubmission = decode((await getNota(alice.headers, row.id)).json().data.nota);
    expect(fromSubmission.payload).toMatchObject({
      txHash: minedHash,
      blockNumber: 9,
      blockHash: minedBlock,
    });
  });

  it('is 404 not_found for another account and for an unknown id', async () => {
    expect(errorOf(await getNota(bob.headers, confirmed.id))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(errorOf(await getNota(alice.headers, newId()))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('GET /notas/keys', () => {
  it('publishes the signing key without authentication, as raw bytes and as a JWK', async () => {
    const response = await api.get('/notas/keys');
    expect(response.statusCode).toBe(200);
    const [key, ...rest] = response.json().data.keys;
    expect(rest).toEqual([]);
    expect(key).toMatchObject({
      keyId: expect.stringMatching(/^[0-9a-f]{16}$/),
      alg: 'Ed25519',
      jwk: { kty: 'OKP', crv: 'Ed25519', kid: key.keyId },
    });
    expect(Buffer.from(key.publicKey, 'base64url')).toHaveLength(32);
    expect(key.jwk.x).toBe(key.publicKey);
    expect(key.keyId).toBe(notaSigningKey(ctx.deps.keyring).keyId);
  });

  it('derives the key from the master key: the same master signs alike, another does not', () => {
    const master = randomBytes(32);
    const one = notaSigningKey(createKeyring(master));
    const again = notaSigningKey(createKeyring(Buffer.from(master)));
    const other = notaSigningKey(createKeyring(randomBytes(32)));
    expect(again.publicKeyRaw).toBe(one.publicKeyRaw);
    expect(again.keyId).toBe(one.keyId);
    expect(other.publicKeyRaw).not.toBe(one.publicKeyRaw);
  });
});

describe('POST /notas/verify', () => {
  const verifyNota = (nota: string, headers = alice.headers) =>
    api.post('/notas/verify', { body: { nota }, headers });

  it('answers valid for a receipt it issued, with its kind and payload', async () => {
    const nota = (await getNota(alice.headers, confirmed.id)).json().data.nota;
    const response = await verifyNota(nota);
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual({ valid: true, kind: 'receipt', payload: decode(nota).payload });
    const key = await apiKeyOf(ctx.app, bob);
    expect((await verifyNota(nota, key.headers)).json().data.valid).toBe(true);
  });

  it('answers valid: false (200) for a tampered receipt and for one signed by another key', async () => {
    const document = decode((await getNota(alice.headers, confirmed.id)).json().data.nota);
    const tampered = encodeNota({
      ...document,
      payload: {
        ...document.payload,
        toAddress: aliceWallet.address.replace(/.$/, (last) => (last === '0' ? '1' : '0')),
      },
    });
    const response = await verifyNota(tampered);
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ valid: false, kind: 'receipt' });

    const { signature: _, ...unsigned } = document;
    const foreign = signNota(createKeyring(randomBytes(32)), unsigned);
    expect((await verifyNota(encodeNota(foreign))).json().data.valid).toBe(false);
    const forged = {
      ...foreign,
      signature: { ...foreign.signature, keyId: document.signature?.keyId },
    } as Nota;
    expect((await verifyNota(encodeNota(forged))).json().data.valid).toBe(false);
    expect((await verifyNota(encodeNota(unsigned as Nota))).json().data.valid).toBe(false);
  });

  it.each([
    ['not base64url', 'this is not a nota!'],
    ['base64url of text', Buffer.from('hello world').toString('base64url')],
    [
      'JSON without nota: 1',
      Buffer.from(JSON.stringify({ nota: 2, kind: 'receipt', issuedAt: 'x', payload: {} })).toString(
        'base64url',
      ),
    ],
    [
      'an unknown kind',
      Buffer.from(JSON.stringify({ nota: 1, kind: 'invoice', issuedAt: 'x', payload: {} })).toString(
        'base64url',
      ),
    ],
    ['a JSON array', Buffer.from('[1,2]').toString('base64url')],
  ])('answers 400 invalid_nota for %s', async (_name, nota) => {
    expect(errorOf(await verifyNota(nota))).toMatchObject({ status: 400, code: 'invalid_nota' });
  });

  it('refuses a body without a nota string with validation_error', async () => {
    // Not what the document takes: sent as is.
    const nested = await api.raw('POST', '/notas/verify', {
      payload: { nota: { nested: true } },
      headers: alice.headers,
    });
    expect(errorOf(nested)).toMatchObject({
      status: 400,
      code: 'validation_error',
    });
    const missing = await api.raw('POST', '/notas/verify', { payload: {}, headers: alice.headers });
    expect(errorOf(missing)).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('appears in the OpenAPI document under Receipts', async () => {
    const document = (await api.raw('GET', '/openapi.json')).json();
    expect(document.paths['/transactions/{id}/nota'].get.tags).toEqual(['Receipts']);
    expect(document.paths['/notas/keys'].get.security).toEqual([]);
    expect(document.paths['/notas/verify'].post.tags).toEqual(['Receipts']);
    expect(document.paths['/notas/verify'].post.description).toMatch(/wallet-key nota carries no signature/);
  });
});
