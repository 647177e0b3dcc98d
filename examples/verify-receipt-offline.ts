/**
 * Verify a receipt offline: a transaction's notarized receipt (`.nota`) carries the service's Ed25519 signature over
 * the RFC 8785 canonical JSON of the nota without its `signature`. With the service's public keys fetched once
 * (`GET /notas/keys`), anyone checks a receipt without calling the service.
 *
 *   npm start                       # in another shell
 *   node examples/verify-receipt-offline.ts
 */
import { createPublicKey, verify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { connect, expectConfirmed } from './connect.ts';

interface Nota {
  nota: number;
  kind: string;
  payload: Record<string, unknown>;
  signature?: { alg: string; keyId: string; value: string };
}

const client = await connect('receipts');
const wallet = await client.wallets.create({ type: 'CUSTODIAL' });
const funding = await expectConfirmed(client, (await client.fund({ walletId: wallet.id, amount: '5' })).id);
const receipt = await client.transactions.receipt(funding.id);
const keys = await client.notas.keys();
console.log(`receipt ${receipt.filename}; ${keys.length} public key(s)`);

// From here on, nothing is asked of the service.
function verifyOffline(encoded: string): boolean {
  const nota = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Nota;
  const key = keys.find((candidate) => candidate.keyId === nota.signature?.keyId);
  if (nota.signature?.alg !== 'Ed25519' || !key) return false;
  const { signature, ...unsigned } = nota;
  const signed = Buffer.from((canonicalize as unknown as (value: unknown) => string)(unsigned), 'utf8');
  const publicKey = createPublicKey({ key: key.jwk, format: 'jwk' });
  return verify(null, signed, publicKey, Buffer.from(signature.value, 'base64url'));
}

const valid = verifyOffline(receipt.nota);
console.log(`receipt of ${funding.type} ${funding.id}: signature ${valid ? 'valid' : 'INVALID'}`);
const document = JSON.parse(Buffer.from(receipt.nota, 'base64url').toString('utf8')) as Nota;
const forged = { ...document, payload: { ...document.payload, amount: '5000.00' } };
const forgedValid = verifyOffline(Buffer.from(JSON.stringify(forged)).toString('base64url'));
console.log(`the same receipt with its amount changed: signature ${forgedValid ? 'valid' : 'INVALID'}`);
if (!valid || forgedValid) throw new Error('offline verification did not behave');
