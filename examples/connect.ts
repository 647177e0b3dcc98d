/**
 * How the examples reach a running sealpay (`npm start`): `SEALPAY_URL` (default http://127.0.0.1:8080) and an API
 * key in `SEALPAY_API_KEY`. Without a key, a demo account is signed up and given one, so each example runs
 * against a fresh service as is. In your own code: `import { createClient } from '@sealpay/client'`.
 */
import { randomBytes } from 'node:crypto';
import { createClient, type SealpayClient } from '../clients/typescript/src/index.ts';

export const SERVICE_URL = (process.env.SEALPAY_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
export const BASE_URL = `${SERVICE_URL}/api/v1`;

/** Signs up a demo account and returns an API key of it (keys are created from a session, never another key). */
async function demoApiKey(name: string): Promise<string> {
  const anonymous = createClient({ baseUrl: BASE_URL });
  const email = `${name}-${randomBytes(4).toString('hex')}@example.com`;
  const signup = await anonymous.raw.POST('/auth/signup', {
    body: { email, password: `Demo-${randomBytes(6).toString('hex')}-9`, name },
  });
  if (!signup.response.ok) throw new Error(`signup failed: HTTP ${signup.response.status}`);
  const cookie = signup.response.headers
    .getSetCookie()
    .find((value) => value.startsWith('svc_session='))
    ?.split(';')[0];
  if (!cookie) throw new Error('signup set no session cookie');
  const session = createClient({ baseUrl: BASE_URL, headers: { cookie } });
  const { plaintext } = await session.request('post', '/keys', { body: { name: `${name} example` } });
  return plaintext;
}

/** A client with an API key: `SEALPAY_API_KEY`, or a new demo account's (`name` tells demo accounts apart). */
export async function connect(name = 'demo'): Promise<SealpayClient> {
  const apiKey = process.env.SEALPAY_API_KEY ?? (await demoApiKey(name));
  return createClient({ baseUrl: BASE_URL, apiKey });
}

/** A custodial wallet holding `amount` of confidential cSTABLE (sandbox: from the faucet, then minted). */
export async function fundedWallet(client: SealpayClient, amount: string) {
  const wallet = await client.wallets.create({ type: 'CUSTODIAL', label: 'example' });
  const funding = await client.fund({ walletId: wallet.id, amount });
  await expectConfirmed(client, funding.id);
  const minting = await client.mint({ walletId: wallet.id, amount });
  await expectConfirmed(client, minting.id);
  return wallet;
}

/** Waits for a transaction and fails loudly if it did not go through. */
export async function expectConfirmed(client: SealpayClient, id: string) {
  const transaction = await client.waitForTransaction(id, { timeoutMs: 120_000 });
  if (transaction.status === 'FAILED') {
    throw new Error(`${transaction.type} ${id} failed: ${transaction.errorCode} ${transaction.error}`);
  }
  return transaction;
}
