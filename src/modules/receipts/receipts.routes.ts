import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import {
  decodeNota,
  MAX_NOTA_LENGTH,
  NOTA_KINDS,
  notaPublicKeys,
  verifyReceiptSignature,
  walletKeyPayloadOf,
} from '../notas/nota.ts';
import { NotaFile, NotaKey } from '../notas/notas.schema.ts';
import { ownTransaction } from '../transactions/transactions.service.ts';
import { issueReceipt } from './receipts.service.ts';

export function registerReceiptRoutes(app: App, deps: Deps): void {
  app.get(
    '/transactions/:id/nota',
    {
      config: { auth: 'either', errors: ['receipt_unavailable', ['receipt_unavailable', 409]] },
      schema: {
        operationId: 'getReceipt',
        tags: ['Receipts'],
        summary: 'Notarized receipt of a transaction that reached the chain',
        description:
          'A pure database read. `nota` is base64url of the UTF-8 JSON ' +
          '`{"nota": 1, "kind": "receipt", "issuedAt", "payload", "signature"}`: `payload` holds the ' +
          'transaction as `GET /transactions/{id}` shows it plus `chainId`, `blockNumber`, `blockHash` and ' +
          '`logIndex`; `signature` = `{alg: "Ed25519", keyId, value}` is the service\'s Ed25519 signature ' +
          '(base64url) over the RFC 8785 canonical JSON of the nota without its `signature` member. Verify ' +
          'offline with a key from `GET /notas/keys`. A transaction without a block yet (`QUEUED`, or `PENDING` ' +
          'before it is mined) is `409 receipt_unavailable` with `details: {status, retryable: true}`; one that ' +
          'FAILED before reaching the chain is `400 receipt_unavailable` with `retryable: false`.',
        params: IdParam,
        response: responses({ 200: NotaFile }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const row = await ownTransaction(deps, user.id, request.params.id, principal.scope);
      return ok(await issueReceipt(deps, row));
    },
  );

  app.get(
    '/notas/keys',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'listNotaKeys',
        tags: ['Receipts'],
        summary: 'Public keys that sign receipts, for verifying them offline',
        description:
          'Each key as its raw 32-byte Ed25519 public key (base64url) and as a JWK. A receipt names the key ' +
          'that signed it in `signature.keyId`.',
        response: responses({ 200: Type.Object({ keys: Type.Array(NotaKey) }) }),
      },
    },
    async () =>
      ok({
        keys: notaPublicKeys(deps.keyring).map((key) => ({
          keyId: key.keyId,
          alg: 'Ed25519' as const,
          publicKey: key.publicKeyRaw,
          jwk: key.jwk,
        })),
      }),
  );

  app.post(
    '/notas/verify',
    {
      config: { auth: 'either', errors: ['invalid_nota'] },
      schema: {
        operationId: 'verifyNota',
        tags: ['Receipts'],
        summary: 'Check a .nota file',
        description:
          "A receipt is `valid` when its signature holds under one of the service's keys (a changed byte " +
          'makes it `valid: false`, still 200). A wallet-key nota carries no signature: it is `valid` when ' +
          'well-formed (its AES-GCM tag is only checked by decrypting it, on import). A string that is not a ' +
          'nota (not base64url JSON with `nota: 1` and a known `kind`) is `400 invalid_nota`.',
        body: Type.Object({ nota: Type.String({ minLength: 1, maxLength: MAX_NOTA_LENGTH }) }),
        response: responses({
          200: Type.Object({
            valid: Type.Boolean(),
            kind: Type.Union(NOTA_KINDS.map((kind) => Type.Literal(kind))),
            payload: Type.Record(Type.String(), Type.Unknown()),
          }),
        }),
      },
    },
    async (request) => {
      const nota = decodeNota(request.body.nota);
      const valid =
        nota.kind === 'receipt'
          ? verifyReceiptSignature(deps.keyring, nota)
          : walletKeyPayloadOf(nota) !== null;
      return ok({ valid, kind: nota.kind, payload: nota.payload });
    },
  );
}
