/** The .nota file's API schemas: a nota as a file to save, and a key that signs receipts. */
import { Type } from '@sinclair/typebox';

export const NotaFile = Type.Object(
  {
    filename: Type.String({ description: 'Suggested file name, ending in `.nota`' }),
    nota: Type.String({ description: 'base64url of the UTF-8 JSON nota document' }),
  },
  { title: 'NotaFile' },
);

export const NotaKey = Type.Object(
  {
    keyId: Type.String(),
    alg: Type.Literal('Ed25519'),
    publicKey: Type.String({ description: 'The raw 32-byte Ed25519 public key, base64url' }),
    jwk: Type.Object({
      kty: Type.Literal('OKP'),
      crv: Type.Literal('Ed25519'),
      x: Type.String(),
      kid: Type.String(),
      alg: Type.Literal('EdDSA'),
      use: Type.Literal('sig'),
    }),
  },
  { title: 'NotaKey' },
);
