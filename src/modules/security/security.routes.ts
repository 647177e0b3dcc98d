import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { isHttpsOrigin, setSessionCookie } from '../../http/cookies.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import { requestContext } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { toUser, User } from '../accounts/accounts.schema.ts';
import { startSession } from '../accounts/accounts.service.ts';
import {
  authenticationOptions,
  CHALLENGE_TTL_MS,
  type ChallengeCookie,
  passkeyLogin,
  registerPasskey,
  registrationOptions,
  removePasskey,
  renamePasskey,
  toPasskey,
} from './passkeys.ts';
import { listPasskeys } from './security.repository.ts';
import {
  OptionsData,
  Passkey,
  PasskeyLoginBody,
  PasskeyLoginOptionsBody,
  RecoveryCodesBody,
  RecoveryCodesData,
  RegisterPasskeyBody,
  RenamePasskeyBody,
  TotpDisableBody,
  TotpEnableBody,
  TotpEnabledData,
  TotpLoginBody,
  TotpSetupData,
  TotpState,
} from './security.schema.ts';
import {
  completeTotpLogin,
  disableTotp,
  enableTotp,
  regenerateRecoveryCodes,
  setupTotp,
} from './totp.service.ts';

const UserData = Type.Object({ user: User });

const CHALLENGE_COOKIE = 'svc_webauthn';

/** The WebAuthn challenge cookie of a request: signed, httpOnly, SameSite=Strict, sent to the API only. */
function challengeCookie(request: FastifyRequest, reply: FastifyReply, deps: Deps): ChallengeCookie {
  const attributes = {
    httpOnly: true,
    sameSite: 'strict',
    secure: isHttpsOrigin(deps),
    path: '/api/v1',
  } as const;
  return {
    read() {
      const raw = request.cookies[CHALLENGE_COOKIE];
      if (!raw) return undefined;
      const unsigned = request.unsignCookie(raw);
      return unsigned.valid && unsigned.value ? unsigned.value : null;
    },
    write(value) {
      reply.setCookie(CHALLENGE_COOKIE, value, {
        ...attributes,
        signed: true,
        maxAge: Math.ceil(CHALLENGE_TTL_MS / 1000),
      });
    },
    clear() {
      reply.clearCookie(CHALLENGE_COOKIE, attributes);
    },
  };
}

/** TOTP two-factor and passkeys: enrollment under `/me`, the second login step and passkey login under `/auth`. */
export function registerSecurityRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

  app.post(
    '/me/totp/setup',
    {
      config: { auth: 'session', errors: ['totp_already_enabled'] },
      schema: {
        operationId: 'setUpTotp',
        tags: ['Security'],
        summary: 'Start TOTP enrollment',
        description:
          'Creates a pending secret (sealed at rest) and returns it with its `otpauth://` URI, once. ' +
          'Confirm with `POST /me/totp/enable`. `400 totp_already_enabled` while 2FA is on.',
        response: responses({ 200: TotpSetupData }),
      },
    },
    async (request) => ok(await setupTotp(deps, principalOf(request).user)),
  );

  app.post(
    '/me/totp/enable',
    {
      config: {
        auth: 'session',
        errors: ['totp_already_enabled', 'totp_not_configured', 'invalid_totp_code'],
      },
      schema: {
        operationId: 'enableTotp',
        tags: ['Security'],
        summary: 'Enable TOTP',
        description:
          'Confirms the pending enrollment with a live code; two-factor enforcement starts on success. Answers ' +
          'ten single-use `recoveryCodes`, shown this once (stored hashed): each logs in, or turns two-factor off, ' +
          'in place of a code, once. Errors: `400 totp_not_configured`, `400 invalid_totp_code`.',
        body: TotpEnableBody,
        response: responses({ 200: TotpEnabledData }),
      },
    },
    async (request) => {
      const recoveryCodes = await enableTotp(deps, principalOf(request).user, request.body.code);
      return ok({ totpEnabled: true as const, recoveryCodes });
    },
  );

  app.post(
    '/me/totp/recovery-codes',
    {
      config: {
        auth: 'session',
        errors: ['totp_not_configured', 'invalid_totp_code', 'invalid_credentials'],
      },
      schema: {
        tags: ['Security'],
        operationId: 'regenerateRecoveryCodes',
        summary: 'New TOTP recovery codes',
        description:
          'Replaces the recovery codes with ten new ones, shown this once; the old ones stop working. Needs the ' +
          'password and a live code (or an unused recovery code). Errors: `401 invalid_credentials` (password), ' +
          '`400 invalid_totp_code`, `400 totp_not_configured` (two-factor is off), `429 rate_limited` after 10 ' +
          'password attempts in 15 minutes (counted per account with `POST /me/password`).',
        body: RecoveryCodesBody,
        response: responses({ 200: RecoveryCodesData }),
      },
    },
    async (request, reply) => {
      const recoveryCodes = await regenerateRecoveryCodes(
        deps,
        requestContext(request, reply),
        principalOf(request).user,
        request.body,
      );
      return ok({ recoveryCodes });
    },
  );

  app.post(
    '/me/totp/disable',
    {
      config: {
        auth: 'session',
        errors: ['totp_not_configured', 'invalid_totp_code', 'invalid_credentials'],
      },
      schema: {
        operationId: 'disableTotp',
        tags: ['Security'],
        summary: 'Disable TOTP',
        description:
          'Needs the password and a live code (or an unused recovery code); drops the recovery codes and emails ' +
          'a notice to the account. Errors: `401 invalid_credentials` (password), ' +
          '`400 invalid_totp_code`, `400 totp_not_configured`, `429 rate_limited` after 10 password attempts in ' +
          '15 minutes (counted per account with `POST /me/password`).',
        body: TotpDisableBody,
        response: responses({ 200: TotpState(false) }),
      },
    },
    async (request, reply) => {
      await disableTotp(deps, requestContext(request, reply), principalOf(request).user, request.body);
      return ok({ totpEnabled: false as const });
    },
  );

  app.post(
    '/auth/login/totp',
    {
      config: { auth: 'none', rate: 'own', errors: [['invalid_totp_code', 401], 'account_disabled'] },
      schema: {
        operationId: 'logInWithTotp',
        tags: ['Accounts'],
        summary: 'Second login step: TOTP code',
        description:
          "Exchanges the `pendingToken` of `POST /auth/login` and a live code, or one of the account's recovery " +
          'codes (each works once), for a session cookie. Pending tokens live 5 minutes and are single use. Every ' +
          'failure is `401 invalid_totp_code` and counts against the login limit.',
        body: TotpLoginBody,
        response: responses({ 200: UserData }),
      },
    },
    async (request, reply) => {
      const { pendingToken, code } = request.body;
      const user = await completeTotpLogin(deps, requestContext(request, reply), pendingToken, code);
      const session = await startSession(deps, user);
      setSessionCookie(reply, deps, session);
      return ok({ user: toUser(session.user) });
    },
  );

  app.get(
    '/me/passkeys',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'listPasskeys',
        tags: ['Security'],
        summary: 'List passkeys',
        response: responses({ 200: Type.Object({ passkeys: Type.Array(Passkey) }) }),
      },
    },
    async (request) => {
      const rows = await listPasskeys(db, principalOf(request).user.id);
      return ok({ passkeys: rows.map(toPasskey) });
    },
  );

  app.patch(
    '/me/passkeys/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['Security'],
        operationId: 'renamePasskey',
        summary: 'Rename a passkey',
        description: "Errors: `404 not_found` (another account's id, or a removed passkey).",
        params: IdParam,
        body: RenamePasskeyBody,
        response: responses({ 200: Type.Object({ passkey: Passkey }) }),
      },
    },
    async (request) => {
      const passkey = await renamePasskey(
        deps,
        principalOf(request).user.id,
        request.params.id,
        request.body.deviceName,
      );
      return ok({ passkey: toPasskey(passkey) });
    },
  );

  app.delete(
    '/me/passkeys/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['Security'],
        operationId: 'removePasskey',
        summary: 'Remove a passkey',
        description:
          'It logs in no more, at once, and is no longer listed. Idempotent: a repeat answers the same record. ' +
          "Errors: `404 not_found` (another account's id).",
        params: IdParam,
        response: responses({ 200: Type.Object({ passkey: Passkey }) }),
      },
    },
    async (request) => {
      const passkey = await removePasskey(deps, principalOf(request).user.id, request.params.id);
      return ok({ passkey: toPasskey(passkey) });
    },
  );

  app.post(
    '/me/passkeys/options',
    {
      config: { auth: 'session' },
      schema: {
        operationId: 'getPasskeyRegistrationOptions',
        tags: ['Security'],
        summary: 'Passkey registration options',
        description:
          'WebAuthn creation options. The challenge travels in a signed cookie bound to the account, valid ' +
          '5 minutes and single use; it must accompany `POST /me/passkeys/register`.',
        response: responses({ 200: OptionsData }),
      },
    },
    async (request, reply) =>
      ok({
        options: await registrationOptions(
          deps,
          challengeCookie(request, reply, deps),
          principalOf(request).user,
        ),
      }),
  );

  app.post(
    '/me/passkeys/register',
    {
      config: {
        auth: 'session',
        errors: [
          'invalid_challenge',
          'challenge_expired',
          'invalid_host',
          'passkey_verification_failed',
          'passkey_exists',
        ],
      },
      schema: {
        operationId: 'registerPasskey',
        tags: ['Security'],
        summary: 'Register a passkey',
        description:
          'Verifies the attestation against the challenge cookie. Errors: `400 invalid_challenge`, ' +
          '`400 challenge_expired`, `400 invalid_host`, `400 passkey_verification_failed`, `409 passkey_exists`.',
        body: RegisterPasskeyBody,
        response: responses({ 201: Type.Object({ passkey: Passkey }) }),
      },
    },
    async (request, reply) => {
      const passkey = await registerPasskey(
        deps,
        requestContext(request, reply),
        challengeCookie(request, reply, deps),
        principalOf(request).user,
        request.body.credential as RegistrationResponseJSON,
        request.body.deviceName?.trim() || null,
      );
      return reply.code(201).send(ok({ passkey: toPasskey(passkey) }));
    },
  );

  app.post(
    '/auth/passkey/options',
    {
      config: { auth: 'none', optionalBody: true },
      schema: {
        operationId: 'getPasskeyLoginOptions',
        tags: ['Accounts'],
        summary: 'Passkey login options',
        description:
          'WebAuthn request options; the challenge travels in a signed cookie (5 minutes, single use). ' +
          '`allowCredentials` is always empty (discoverable credentials): the answer is the same whether or not ' +
          '`email` has an account or passkeys, so it reveals neither; `email` is accepted and not used.',
        body: PasskeyLoginOptionsBody,
        response: responses({ 200: OptionsData }),
      },
    },
    async (request, reply) =>
      ok({ options: await authenticationOptions(deps, challengeCookie(request, reply, deps)) }),
  );

  app.post(
    '/auth/passkey/login',
    {
      config: {
        auth: 'none',
        rate: 'own',
        errors: [
          'invalid_challenge',
          'challenge_expired',
          'invalid_host',
          'unknown_passkey',
          ['passkey_verification_failed', 401],
          'account_disabled',
        ],
      },
      schema: {
        operationId: 'logInWithPasskey',
        tags: ['Accounts'],
        summary: 'Log in with a passkey',
        description:
          'Verifies the assertion against the challenge cookie and mints a session cookie. Errors: ' +
          '`401 unknown_passkey`, `401 passkey_verification_failed` (signature, challenge, origin or counter), ' +
          '`403 account_disabled`. Failures count against the login limit.',
        body: PasskeyLoginBody,
        response: responses({ 200: UserData }),
      },
    },
    async (request, reply) => {
      const user = await passkeyLogin(
        deps,
        requestContext(request, reply),
        challengeCookie(request, reply, deps),
        request.body.credential as AuthenticationResponseJSON,
      );
      const session = await startSession(deps, user);
      setSessionCookie(reply, deps, session);
      return ok({ user: toUser(session.user) });
    },
  );
}
