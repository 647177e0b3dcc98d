import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiOf, type RequestBodyOf } from '../../../test/api.ts';
import {
  apiKeyOf,
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  waitForStatus,
} from '../../../test/harness.ts';
import {
  bytes,
  decodeWalletKeyNota as decode,
  webCryptoDecrypt,
  webCryptoNota,
} from '../../../test/wallet-key-nota.ts';

// Key derivation must run on the thread pool: the synchronous PBKDF2 would stall every request for its
// duration. The mock records the async calls and makes any synchronous call fail the test.
const pbkdf2Calls = vi.hoisted(() => [] as number[]);
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    default: actual,
    pbkdf2: (...args: Parameters<typeof actual.pbkdf2>) => {
      pbkdf2Calls.push(args[2]);
      return actual.pbkdf2(...args);
    },
    pbkdf2Sync: () => {
      throw new Error('pbkdf2Sync blocks the event loop');
    },
  };
});

const PASSPHRASE = 'correct horse battery staple';

let ctx: TestContext;
const api = apiOf(() => ctx.app);
let alice: Caller;
let bob: Caller;
let custodial: { id: string; address: string };
let external: { id: string; address: string };

function exportWallet(caller: { headers: Record<string, string> }, id: string, passphrase = PASSPHRASE) {
  return api.post('/wallets/{id}/export', { params: { id }, body: { passphrase }, headers: caller.headers });
}

function importNota(
  caller: { headers: Record<string, string> },
  body: RequestBodyOf<'post', '/wallets/import'>,
) {
  return api.post('/wallets/import', { body, headers: caller.headers });
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
  custodial = created.json().data.wallet;
  const watched = await api.post('/wallets', {
    body: {
      type: 'EXTERNAL',
      address: privateKeyToAccount(generatePrivateKey()).address,
    },
    headers: alice.headers,
  });
  expect(watched.statusCode).toBe(201);
  external = watched.json().data.wallet;
});
afterAll(() => ctx.close());

describe('POST /wallets/{id}/export', () => {
  it('exports a file that standard WebCrypto opens with the passphrase alone, to the wallet key', async () => {
    pbkdf2Calls.length = 0;
    const response = await exportWallet(alice, custodial.id);
    expect(response.statusCode).toBe(200);
    const { filename, nota } = response.json().data;
    expect(filename).toBe(`sealpay-wallet-${custodial.address}.nota`);
    expect(nota).toMatch(/^[A-Za-z0-9_-]+$/);
    const document = decode(nota);
    expect(Object.keys(document).sort()).toEqual(['issuedAt', 'kind', 'nota', 'payload']);
    expect(document).toMatchObject({
      nota: 1,
      kind: 'wallet-key',
      issuedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      payload: {
        address: custodial.address,
        kdf: { name: 'PBKDF2', hash: 'SHA-256', iterations: 310000, salt: expect.any(String) },
        cipher: { name: 'AES-256-GCM', iv: expect.any(String), ciphertext: expect.any(String) },
      },
    });
    expect(bytes(document.payload.kdf.salt).length).toBeGreaterThanOrEqual(16);
    expect(bytes(document.payload.cipher.iv)).toHaveLength(12);
    // 32 bytes of key and the 16-byte tag.
    expect(bytes(document.payload.cipher.ciphertext)).toHaveLength(48);
    const privateKey = await webCryptoDecrypt(document, PASSPHRASE);
    expect(privateKeyToAccount(privateKey).address).toBe(custodial.address);
    await expect(webCryptoDecrypt(document, `${PASSPHRASE}!`)).rejects.toThrow();
    expect(pbkdf2Calls).toEqual([310_000]);
  });

  it('uses a fresh salt and IV for every export', async () => {
    const first = decode((await exportWallet(alice, custodial.id)).json().data.nota).payload;
    const second = decode((await exportWallet(alice, custodial.id)).json().data.nota).payload;
    expect(second.kdf.salt).not.toBe(first.kdf.salt);
    expect(second.cipher.iv).not.toBe(first.cipher.iv);
    expect(second.cipher.ciphertext).not.toBe(first.cipher.ciphertext);
  });

  it('is refused to an API key: 403 session_required', async () => {
    const key = await apiKeyOf(ctx.app, alice);
    expect(errorOf(await exportWallet(key, custodial.id))).toMatchObject({
      status: 403,
      code: 'session_required',
    });
  });

  it('refuses an external wallet: 400 wallet_not_custodial', async () => {
    expect(errorOf(await exportWallet(alice, external.id))).toMatchObject({
      status: 400,
      code: 'wallet_not_custodial',
    });
  });

  it.each([
    ['7 characters', 'x'.repeat(7)],
    ['201 characters', 'x'.repeat(201)],
  ])('refuses a passphrase of %s: 400 validation_error', async (_name, passphrase) => {
    const error = errorOf(await exportWallet(alice, custodial.id, passphrase));
    expect(error).toMatchObject({ status: 400, code: 'validation_error' });
    expect(error.details).toEqual([{ path: 'passphrase', message: expect.any(String) }]);
  });

  it('accepts the bounds: 8 and 200 characters', async () => {
    for (const passphrase of ['x'.repeat(8), 'ü'.repeat(200)]) {
      const response = await exportWallet(alice, custodial.id, passphrase);
      expect(response.statusCode).toBe(200);
      const privateKey = await webCryptoDecrypt(decode(response.json().data.nota), passphrase);
      expect(privateKeyToAccount(privateKey).address).toBe(custodial.address);
    }
  });

  it('answers 404 not_found for another account’s wallet and for an unknown id', async () => {
    expect(errorOf(await exportWallet(bob, custodial.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(errorOf(await exportWallet(alice, 'nosuchwallet'))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('is reported valid (unsigned, well-formed) by POST /notas/verify', async () => {
    const nota = (await exportWallet(alice, custodial.id)).json().data.nota;
    const response = await api.post('/notas/verify', { body: { nota }, headers: alice.headers });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual({ valid: true, kind: 'wallet-key', payload: decode(nota).payload });
    const broken = decode(nota);
    broken.payload.cipher.iv = 'AAAA';
    const malformed = Buffer.from(JSON.stringify(broken)).toString('base64url');
    expect(
      (await api.post('/notas/verify', { body: { nota: malformed }, headers: alice.headers })).json().data,
    ).toMatchObject({
      valid: false,
      kind: 'wallet-key',
    });
  });
});

describe('POST /wallets/import', () => {
  it('refuses an address already registered, in another account or the same: 409 wallet_exists', async () => {
    const nota = (await exportWallet(alice, custodial.id)).json().data.nota;
    expect(errorOf(await importNota(bob, { nota, passphrase: PASSPHRASE }))).toMatchObject({
      status: 409,
      code: 'wallet_exists',
    });
    expect(errorOf(await importNota(alice, { nota, passphrase: PASSPHRASE }))).toMatchObject({
      status: 409,
      code: 'wallet_exists',
    });
  });

  it('refuses a wrong passphrase: 400 invalid_passphrase', async () => {
    const nota = (await exportWallet(alice, custodial.id)).json().data.nota;
    expect(errorOf(await importNota(bob, { nota, passphrase: 'not the passphrase' }))).toMatchObject({
      status: 400,
      code: 'invalid_passphrase',
    });
  });

  it('refuses what is not a wallet-key nota: 400 invalid_nota', async () => {
    const fund = await api.post('/fund', {
      body: { walletId: custodial.id, amount: '10' },
      headers: alice.headers,
    });
    const done = await waitForStatus(ctx.app, alice.headers, fund.json().data.transaction.id);
    expect(done.status).toBe('CONFIRMED');
    const receipt = await api.get('/transactions/{id}/nota', {
      params: { id: done.id },
      headers: alice.headers,
    });
    expect(receipt.statusCode).toBe(200);
    for (const nota of [receipt.json().data.nota, 'garbage!', Buffer.from('{}').toString('base64url')]) {
      expect(errorOf(await importNota(alice, { nota, passphrase: PASSPHRASE }))).toMatchObject({
        status: 400,
        code: 'invalid_nota',
      });
    }
  });

  it('refuses a file whose key does not belong to the address it names: 400 invalid_nota', async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const nota = await webCryptoNota(generatePrivateKey(), PASSPHRASE, other);
    expect(errorOf(await importNota(bob, { nota, passphrase: PASSPHRASE }))).toMatchObject({
      status: 400,
      code: 'invalid_nota',
    });
  });

  it('is refused to an API key: 403 session_required', async () => {
    const key = await apiKeyOf(ctx.app, bob);
    const nota = await webCryptoNota(generatePrivateKey(), PASSPHRASE);
    expect(errorOf(await importNota(key, { nota, passphrase: PASSPHRASE }))).toMatchObject({
      status: 403,
      code: 'session_required',
    });
  });

  it('imports a key as a custodial wallet the service can sign with, and exports it back', async () => {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    const carol = await signup(ctx.app);
    const response = await importNota(carol, {
      nota: await webCryptoNota(privateKey, PASSPHRASE),
      passphrase: PASSPHRASE,
      label: 'Cold storage',
    });
    expect(response.statusCode).toBe(201);
    const wallet = response.json().data.wallet;
    expect(wallet).toMatchObject({ address, type: 'CUSTODIAL', label: 'Cold storage', isPrimary: true });
    const listed = (await api.get('/wallets', { headers: carol.headers })).json().data.wallets;
    expect(listed.map((entry: { id: string }) => entry.id)).toEqual([wallet.id]);

    // The service signs with the imported key: a mint (signed by the wallet itself) confirms.
    const fund = await api.post('/fund', {
      body: { walletId: wallet.id, amount: '5' },
      headers: carol.headers,
    });
    expect((await waitForStatus(ctx.app, carol.headers, fund.json().data.transaction.id)).status).toBe(
      'CONFIRMED',
    );
    const mint = await api.post('/mint', {
      body: { walletId: wallet.id, amount: '2' },
      headers: carol.headers,
    });
    const minted = await waitForStatus(ctx.app, carol.headers, mint.json().data.transaction.id);
    expect(minted).toMatchObject({ status: 'CONFIRMED', fromAddress: address });

    const exported = decode((await exportWallet(carol, wallet.id, 'another passphrase')).json().data.nota);
    expect(await webCryptoDecrypt(exported, 'another passphrase')).toBe(privateKey);
  });

  it('respects the wallet limit: 400 wallet_limit_reached', async () => {
    const dave = await signup(ctx.app);
    for (let i = 0; i < 10; i++) {
      expect(
        (await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: dave.headers })).statusCode,
      ).toBe(201);
    }
    const nota = await webCryptoNota(generatePrivateKey(), PASSPHRASE);
    expect(errorOf(await importNota(dave, { nota, passphrase: PASSPHRASE }))).toMatchObject({
      status: 400,
      code: 'wallet_limit_reached',
    });
  });

  it('documents both routes under Wallets, session only', async () => {
    const document = (await api.raw('GET', '/openapi.json')).json();
    for (const operation of [
      document.paths['/wallets/{id}/export'].post,
      document.paths['/wallets/import'].post,
    ]) {
      expect(operation.tags).toEqual(['Wallets']);
      expect(operation.security).toEqual([{ session: [] }]);
    }
    expect(
      document.paths['/wallets/{id}/export'].post.requestBody.content['application/json'].schema.properties
        .passphrase,
    ).toMatchObject({ minLength: 8, maxLength: 200 });
  });
});
