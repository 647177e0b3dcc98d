/**
 * A software WebAuthn authenticator for tests, independent of the server's code (ES256 on P-256, none
 * attestation, hand-written CBOR): answers registration and authentication ceremonies as a browser's passkey
 * would, or wrongly on purpose (`CeremonyOverrides`).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

// ---------------------------------------------------------------------------------------------------------
// CBOR (the subset WebAuthn needs: unsigned and negative integers, byte and text strings, arrays, maps)

export type CborValue = number | string | Uint8Array | CborValue[] | Map<CborValue, CborValue>;

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) {
    const out = Buffer.alloc(3);
    out[0] = (major << 5) | 25;
    out.writeUInt16BE(length, 1);
    return out;
  }
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(length, 1);
  return out;
}

export function cborEncode(value: CborValue): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([cborHead(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([cborHead(4, value.length), ...value.map(cborEncode)]);
  const parts: Buffer[] = [cborHead(5, value.size)];
  for (const [key, item] of value) parts.push(cborEncode(key), cborEncode(item));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------------------
// WebAuthn

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

export interface RegistrationJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

export interface AssertionJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

export interface CeremonyOverrides {
  /** The origin written into clientDataJSON (default: the authenticator's origin). */
  origin?: string;
  /** The RP ID hashed into authenticatorData (default: the authenticator's RP ID). */
  rpId?: string;
  /** The challenge written into clientDataJSON (default: the one of the options). */
  challenge?: string;
  /** The counter to report (default: the authenticator's next counter). */
  counter?: number;
  /** Flip a byte of the signature. */
  corruptSignature?: boolean;
  flags?: number;
}

/** One passkey on a software authenticator: an ES256 key pair, a credential id and a signature counter. */
export class SoftwareAuthenticator {
  readonly credentialId: Buffer;
  readonly origin: string;
  readonly rpId: string;
  counter: number;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(origin: string, options: { counter?: number } = {}) {
    this.origin = origin;
    this.rpId = new URL(origin).hostname;
    this.credentialId = randomBytes(32);
    this.counter = options.counter ?? 0;
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  /** COSE_Key of the public key: kty EC2, alg ES256, crv P-256, x, y. */
  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return cborEncode(
      new Map<CborValue, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ]),
    );
  }

  private authenticatorData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const head = Buffer.alloc(37);
    createHash('sha256').update(rpId).digest().copy(head, 0);
    head[32] = flags;
    head.writeUInt32BE(counter, 33);
    return attested ? Buffer.concat([head, attested]) : head;
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** Answers `navigator.credentials.create()` for these options with a none attestation. */
  register(options: { challenge: string }, overrides: CeremonyOverrides = {}): RegistrationJSON {
    const clientDataJSON = this.clientData(
      'webauthn.create',
      overrides.challenge ?? options.challenge,
      overrides.origin ?? this.origin,
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16, 0xab), idLength, this.credentialId, this.coseKey()]);
    const authData = this.authenticatorData(
      overrides.rpId ?? this.rpId,
      overrides.flags ?? FLAG_UP | FLAG_UV | FLAG_AT,
      overrides.counter ?? this.counter,
      attested,
    );
    const attestationObject = cborEncode(
      new Map<CborValue, CborValue>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: ['internal', 'hybrid'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** Answers `navigator.credentials.get()`: signs authenticatorData ‖ SHA-256(clientDataJSON) with ES256. */
  assert(options: { challenge: string }, overrides: CeremonyOverrides = {}): AssertionJSON {
    if (overrides.counter === undefined) this.counter += 1;
    const counter = overrides.counter ?? this.counter;
    const clientDataJSON = this.clientData(
      'webauthn.get',
      overrides.challenge ?? options.challenge,
      overrides.origin ?? this.origin,
    );
    const authData = this.authenticatorData(
      overrides.rpId ?? this.rpId,
      overrides.flags ?? FLAG_UP | FLAG_UV,
      counter,
    );
    const signature = sign(
      'sha256',
      Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]),
      this.privateKey,
    );
    if (overrides.corruptSignature)
      signature.writeUInt8((signature.at(-1) as number) ^ 0x01, signature.length - 1);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
