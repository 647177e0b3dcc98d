import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { decodeAttestationObject, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { isUniqueViolation } from '../../db/errors.ts';
import type { PasskeyRow, UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import type { RequestContext } from '../../lib/request-context.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import { admitLogin, recordLoginFailure } from '../accounts/accounts.service.ts';
import { queueNotice } from '../notifications/notifications.service.ts';
import {
  findOwnPasskey,
  findPasskeyByCredentialId,
  insertPasskey,
  listPasskeys,
  markPasskeyRemoved,
  recordPasskeyUse,
  renamePasskey as renamePasskeyRow,
  spendChallenge,
} from './security.repository.ts';

/**
 * Passkeys (WebAuthn). The relying party is the service's public origin: RP ID = its hostname, expected origin
 * = the origin itself. Only ES256, EdDSA and RS256 keys, with user verification.
 *
 * The challenge of a ceremony travels in a signed, httpOnly cookie (`svc_webauthn`) whose value is
 * `v1.<purpose>.<userId or ->.<challenge>.<expiresAtMs>`: the signature (the cookie-signing key) makes it
 * unforgeable, the purpose and user id bind it to one ceremony of one account, the expiry bounds it to five
 * minutes, and a row in `used_webauthn_challenges` (by the challenge's hash) makes it single use.
 */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const RP_NAME = 'sealpay';
/** EdDSA, ES256, RS256. */
const SUPPORTED_ALGORITHMS = [-8, -7, -257];
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{16,200}$/;
const USER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type CeremonyPurpose = 'register' | 'login';

/** The ceremony's challenge cookie as the service sees it; the route keeps it (signed, httpOnly, SameSite=Strict). */
export interface ChallengeCookie {
  /** The cookie's value once its signature holds; undefined when there is none, null when it is forged or empty. */
  read(): string | null | undefined;
  write(value: string): void;
  clear(): void;
}

interface ChallengeClaim {
  purpose: CeremonyPurpose;
  userId: string | null;
  challenge: string;
  expiresAt: Date;
}

export function relyingParty(deps: Deps): { rpID: string; origin: string } {
  const origin = deps.config.publicOrigin;
  return { rpID: new URL(origin).hostname, origin };
}

function invalidChallenge(message = 'The WebAuthn challenge is missing, malformed or used.'): AppError {
  return new AppError('invalid_challenge', message);
}

function writeChallenge(cookie: ChallengeCookie, claim: ChallengeClaim): void {
  cookie.write(
    ['v1', claim.purpose, claim.userId ?? '-', claim.challenge, claim.expiresAt.getTime()].join('.'),
  );
}

/** The claim of the signed challenge cookie; `invalid_challenge` when absent, forged, malformed or for another ceremony. */
function readChallenge(cookie: ChallengeCookie, purpose: CeremonyPurpose): ChallengeClaim {
  const value = cookie.read();
  if (value === undefined) {
    throw invalidChallenge('The WebAuthn challenge cookie is missing. Request options first.');
  }
  if (!value) throw invalidChallenge();
  const [version, cookiePurpose, userId, challenge, expires, ...rest] = value.split('.');
  if (
    version !== 'v1' ||
    cookiePurpose !== purpose ||
    rest.length > 0 ||
    !userId ||
    !(userId === '-' || USER_ID_PATTERN.test(userId)) ||
    !challenge ||
    !CHALLENGE_PATTERN.test(challenge) ||
    !expires ||
    !/^[0-9]{1,16}$/.test(expires)
  ) {
    throw invalidChallenge();
  }
  return {
    purpose,
    userId: userId === '-' ? null : userId,
    challenge,
    expiresAt: new Date(Number(expires)),
  };
}

/**
 * Reads, checks and spends the ceremony's challenge: bound to `userId` when one is expected, unexpired, and
 * never spent before. Spent before any verification, so a failed attempt burns it too.
 */
async function takeChallenge(
  deps: Deps,
  cookie: ChallengeCookie,
  purpose: CeremonyPurpose,
  expectedUserId: string | null,
): Promise<ChallengeClaim> {
  const claim = readChallenge(cookie, purpose);
  cookie.clear();
  if (expectedUserId !== null && claim.userId !== expectedUserId) {
    throw invalidChallenge('The WebAuthn challenge belongs to another session.');
  }
  const now = deps.clock.now();
  if (claim.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('challenge_expired', 'The WebAuthn challenge has expired. Request new options.');
  }
  const fresh = await spendChallenge(
    deps.database.db,
    { challenge: claim.challenge, purpose, userId: claim.userId, expiresAt: claim.expiresAt },
    now,
  );
  if (!fresh) throw invalidChallenge('The WebAuthn challenge was used already.');
  return claim;
}

function transportsOf(row: PasskeyRow): string[] {
  return row.transports;
}

export function toPasskey(row: PasskeyRow) {
  return {
    id: row.id,
    deviceName: row.deviceName,
    transports: row.transports,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Registration

export async function registrationOptions(
  deps: Deps,
  cookie: ChallengeCookie,
  user: UserRow,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rpID } = relyingParty(deps);
  const existing = await listPasskeys(deps.database.db, user.id);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID,
    userName: user.email,
    userDisplayName: user.name ?? user.email,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((row) => ({ id: row.credentialId, transports: transportsOf(row) })),
    // Discoverable: login options name no account's passkeys, so a credential must be found by the authenticator.
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    timeout: CHALLENGE_TTL_MS,
  });
  const expiresAt = new Date(deps.clock.now().getTime() + CHALLENGE_TTL_MS);
  writeChallenge(cookie, {
    purpose: 'register',
    userId: user.id,
    challenge: options.challenge,
    expiresAt,
  });
  return options;
}

function decodeClientOrigin(clientDataJSON: unknown): string | null {
  if (typeof clientDataJSON !== 'string') return null;
  try {
    const parsed = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as {
      origin?: unknown;
    };
    return typeof parsed.origin === 'string' ? parsed.origin : null;
  } catch {
    return null;
  }
}

function attestedRpIdHash(attestationObject: unknown): string | null {
  if (typeof attestationObject !== 'string') return null;
  try {
    const decoded = decodeAttestationObject(new Uint8Array(Buffer.from(attestationObject, 'base64url')));
    const authData = decoded.get('authData');
    return Buffer.from(parseAuthenticatorData(authData).rpIdHash).toString('hex');
  } catch {
    return null;
  }
}

/**
 * `400 invalid_host` when the ceremony ran on another origin or for another RP ID. Undecodable data is left to
 * the verification, which answers `passkey_verification_failed`.
 */
function assertRegistrationHost(deps: Deps, credential: RegistrationResponseJSON): void {
  const { rpID, origin } = relyingParty(deps);
  const clientOrigin = decodeClientOrigin(credential.response?.clientDataJSON);
  if (clientOrigin !== null && clientOrigin !== origin) {
    throw new AppError('invalid_host', `The passkey was created on ${clientOrigin}, not on ${origin}.`);
  }
  const rpIdHash = attestedRpIdHash(credential.response?.attestationObject);
  if (rpIdHash !== null && rpIdHash !== sha256Hex(rpID)) {
    throw new AppError('invalid_host', `The passkey was created for another relying party than ${rpID}.`);
  }
}

function verificationFailed(status?: number): AppError {
  return new AppError(
    'passkey_verification_failed',
    'The passkey response could not be verified.',
    status === undefined ? {} : { status },
  );
}

export async function registerPasskey(
  deps: Deps,
  request: RequestContext,
  cookie: ChallengeCookie,
  user: UserRow,
  credential: RegistrationResponseJSON,
  deviceName: string | null,
): Promise<PasskeyRow> {
  const { db } = deps.database;
  const claim = await takeChallenge(deps, cookie, 'register', user.id);
  assertRegistrationHost(deps, credential);
  const { rpID, origin } = relyingParty(deps);
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await verifyRegistrationResponse({
      response: credential,
      expectedChallenge: claim.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
    });
  } catch (error) {
    request.log.info({ reason: (error as Error).message }, 'passkey registration not verified');
    throw verificationFailed();
  }
  if (!verified.verified) throw verificationFailed();
  const info = verified.registrationInfo.credential;
  const exists = () => new AppError('passkey_exists', 'This passkey is registered already.');
  if (await findPasskeyByCredentialId(db, info.id)) throw exists();
  const transports = (info.transports ?? credential.response.transports ?? []).filter(
    (value): value is string => typeof value === 'string' && value.length <= 32,
  );
  // The notice goes out with the passkey or not at all: a new way into the account is told to its owner.
  return db
    .transaction(async (tx) => {
      const passkey = await insertPasskey(
        tx,
        {
          userId: user.id,
          credentialId: info.id,
          publicKey: Buffer.from(info.publicKey).toString('base64url'),
          counter: info.counter,
          transports: transports.slice(0, 8),
          deviceName,
        },
        deps.clock.now(),
      );
      await queueNotice(deps, tx, user, 'passkey_added', deviceName);
      return passkey;
    })
    .catch((error: unknown) => {
      if (isUniqueViolation(error)) throw exists();
      throw error;
    });
}

function passkeyNotFound(): AppError {
  return new AppError('not_found', 'No such passkey.');
}

/** Renames one of the account's passkeys; `404 not_found` for another account's id or a removed passkey. */
export async function renamePasskey(
  deps: Deps,
  userId: string,
  id: string,
  deviceName: string,
): Promise<PasskeyRow> {
  const name = deviceName.trim();
  if (!name)
    throw new AppError('validation_error', 'The name is empty.', {
      details: [{ path: '/deviceName', message: 'must not be blank' }],
    });
  const renamed = await renamePasskeyRow(deps.database.db, userId, id, name);
  if (!renamed) throw passkeyNotFound();
  return renamed;
}

/**
 * Removes one of the account's passkeys: it logs in no more from this moment (login reads only passkeys in use).
 * Idempotent: removing a removed passkey answers it as it is; another account's id is `404 not_found`.
 */
export async function removePasskey(deps: Deps, userId: string, id: string): Promise<PasskeyRow> {
  const { db } = deps.database;
  const removed = await markPasskeyRemoved(db, userId, id, deps.clock.now());
  if (removed) return removed;
  const existing = await findOwnPasskey(db, userId, id);
  if (!existing) throw passkeyNotFound();
  return existing;
}

// ---------------------------------------------------------------------------------------------------------
// Login

/**
 * Authentication options: the same for everyone. They never name an account's passkeys (an empty
 * `allowCredentials`: discoverable credentials, which registration requires) and the challenge is bound to no
 * account, so neither the options, nor the challenge cookie (signed, not encrypted), nor the time taken tells
 * whether an email has an account or passkeys. The `email` the interface accepts is therefore not looked up.
 */
export async function authenticationOptions(
  deps: Deps,
  cookie: ChallengeCookie,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps).rpID,
    allowCredentials: [],
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  const expiresAt = new Date(deps.clock.now().getTime() + CHALLENGE_TTL_MS);
  writeChallenge(cookie, {
    purpose: 'login',
    userId: null,
    challenge: options.challenge,
    expiresAt,
  });
  return options;
}

/**
 * Passkey login. Failures are `401 unknown_passkey` (no such credential) or `401 passkey_verification_failed`
 * (bad, expired, reused or missing challenge; bad signature, origin or RP ID; a counter that did not move
 * forward), and count against the per-IP login limit; past the limit every attempt fails the same way.
 */
export async function passkeyLogin(
  deps: Deps,
  request: RequestContext,
  cookie: ChallengeCookie,
  credential: AuthenticationResponseJSON,
): Promise<UserRow> {
  const { db } = deps.database;
  const admission = await admitLogin(deps, request);
  if (!admission) throw verificationFailed(401);
  const fail = async (error: AppError) => {
    await recordLoginFailure(deps, admission);
    return error;
  };
  let claim: ChallengeClaim;
  try {
    claim = await takeChallenge(deps, cookie, 'login', null);
  } catch (error) {
    request.log.info({ reason: (error as Error).message }, 'passkey login challenge refused');
    throw await fail(verificationFailed(401));
  }
  const found = await findPasskeyByCredentialId(db, credential.id);
  if (!found) throw await fail(new AppError('unknown_passkey', 'This passkey is not registered.'));
  const { passkey, user } = found;
  const { rpID, origin } = relyingParty(deps);
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: credential,
      expectedChallenge: claim.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: transportsOf(passkey),
      },
      requireUserVerification: true,
    });
  } catch (error) {
    request.log.info({ reason: (error as Error).message }, 'passkey assertion not verified');
    throw await fail(verificationFailed(401));
  }
  if (!verified.verified) throw await fail(verificationFailed(401));
  const now = deps.clock.now();
  const stored = await recordPasskeyUse(
    db,
    passkey.id,
    passkey.counter,
    verified.authenticationInfo.newCounter,
    now,
  );
  if (!stored) throw await fail(verificationFailed(401));
  if (user.disabledAt) throw new AppError('account_disabled', 'This account is disabled.');
  return user;
}
