import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { isHttpsOrigin, setSessionCookie } from '../../http/cookies.ts';
import { ok, responses } from '../../http/envelope.ts';
import { requestContext } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { toUser, User } from '../accounts/accounts.schema.ts';
import { startSession } from '../accounts/accounts.service.ts';
import { CHALLENGE_TTL_MS, type ChallengeCookie } from './passkeys.ts';
import { SECURITY_DOCS } from './security.docs.ts';
import {
  RecoveryCodesBody,
  RecoveryCodesData,
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

export const UserData = Type.Object({ user: User });

export const CHALLENGE_COOKIE = 'svc_webauthn';

/** The WebAuthn challenge cookie of a request: signed, httpOnly, SameSite=Strict, sent to the API only. */
export function challengeCookie(request: FastifyRequest, reply: FastifyReply, deps: Deps): ChallengeCookie {
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

/** TOTP two-factor: enrollment under `/me` and the second login step under `/auth` (passkeys: passkeys.routes.ts). */
export function registerSecurityRoutes(app: App, deps: Deps): void {
  app.post(
    '/me/totp/setup',
    {
      config: { auth: 'session', errors: ['totp_already_enabled'] },
      schema: {
        operationId: 'setUpTotp',
        tags: ['Security'],
        summary: 'Start TOTP enrollment',
        description: SECURITY_DOCS.setUpTotp,
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
        errors: ['totp_not_configured', 'invalid_totp_code'],
      },
      schema: {
        operationId: 'enableTotp',
        tags: ['Security'],
        summary: 'Enable TOTP',
        description: SECURITY_DOCS.enableTotp,
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
        description: SECURITY_DOCS.regenerateRecoveryCodes,
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
        description: SECURITY_DOCS.disableTotp,
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
        description: SECURITY_DOCS.logInWithTotp,
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
}
