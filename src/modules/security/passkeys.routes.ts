import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { setSessionCookie } from '../../http/cookies.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import { requestContext } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { toUser } from '../accounts/accounts.schema.ts';
import { startSession } from '../accounts/accounts.service.ts';
import {
  authenticationOptions,
  passkeyLogin,
  registerPasskey,
  registrationOptions,
  removePasskey,
  renamePasskey,
  toPasskey,
} from './passkeys.ts';
import { SECURITY_DOCS } from './security.docs.ts';
import { listPasskeys } from './security.repository.ts';
import { challengeCookie, UserData } from './security.routes.ts';
import {
  OptionsData,
  Passkey,
  PasskeyLoginBody,
  PasskeyLoginOptionsBody,
  RegisterPasskeyBody,
  RenamePasskeyBody,
} from './security.schema.ts';

/** Passkeys: listed, renamed and removed under /me, registered, and used to log in under /auth. */
export function registerPasskeyRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

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
        description: SECURITY_DOCS.removePasskey,
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
        description: SECURITY_DOCS.getPasskeyRegistrationOptions,
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
        description: SECURITY_DOCS.registerPasskey,
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
        description: SECURITY_DOCS.getPasskeyLoginOptions,
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
        // A login's challenge problems (missing, expired, another ceremony's) and a wrong origin are all
        // `401 passkey_verification_failed`, which says nothing about an account: not registration's 400s.
        errors: ['unknown_passkey', ['passkey_verification_failed', 401], 'account_disabled'],
      },
      schema: {
        operationId: 'logInWithPasskey',
        tags: ['Accounts'],
        summary: 'Log in with a passkey',
        description: SECURITY_DOCS.logInWithPasskey,
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
