import { Type } from '@sinclair/typebox';
import type { UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { clearSessionCookie, setSessionCookie } from '../../http/cookies.ts';
import { ok, responses } from '../../http/envelope.ts';
import { requestContext } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { iso } from '../../lib/time.ts';
import {
  ChangePasswordBody,
  LoginBody,
  PatchMeBody,
  Principal,
  SignupBody,
  toUser,
  User,
} from './accounts.schema.ts';
import {
  changePassword,
  changeUser,
  checkPassword,
  endSession,
  signup,
  startSession,
} from './accounts.service.ts';

const UserData = Type.Object({ user: User });

/** Login hooks other modules plug into (two-step TOTP login lives with the TOTP module). */
export interface LoginExtensions {
  /** Called once the password is right; returns a response body to send instead of a session, or null. */
  secondFactor?: (user: UserRow) => Promise<Record<string, unknown> | null>;
}

export function registerAccountRoutes(app: App, deps: Deps, extensions: LoginExtensions = {}): void {
  app.post(
    '/auth/signup',
    {
      config: { auth: 'none', rate: 'own', errors: ['weak_password', 'email_taken', 'signup_closed'] },
      schema: {
        operationId: 'signUp',
        tags: ['Accounts'],
        summary: 'Create an account',
        body: SignupBody,
        response: responses({ 201: UserData }),
      },
    },
    async (request, reply) => {
      const session = await signup(deps, requestContext(request, reply), request.body);
      setSessionCookie(reply, deps, session);
      return reply.code(201).send(ok({ user: toUser(session.user) }));
    },
  );

  app.post(
    '/auth/login',
    {
      config: { auth: 'none', rate: 'own', errors: ['invalid_credentials', 'account_disabled'] },
      schema: {
        operationId: 'logIn',
        tags: ['Accounts'],
        summary: 'Log in with email and password',
        description:
          'With TOTP on, answers `{totpRequired: true, pendingToken}` and sets no cookie. A wrong password, an ' +
          'unknown email and a locked-out IP are alike `401 invalid_credentials`; a disabled account is ' +
          '`403 account_disabled` whether its password is right or wrong.',
        body: LoginBody,
        response: responses({
          200: Type.Union([
            UserData,
            Type.Object({ totpRequired: Type.Literal(true), pendingToken: Type.String() }),
          ]),
        }),
      },
    },
    async (request, reply) => {
      const { email, password } = request.body;
      const user = await checkPassword(deps, requestContext(request, reply), email, password);
      const pending = extensions.secondFactor ? await extensions.secondFactor(user) : null;
      if (pending) return ok(pending);
      const session = await startSession(deps, user);
      setSessionCookie(reply, deps, session);
      return ok({ user: toUser(session.user) });
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: 'session' },
      schema: {
        operationId: 'logOut',
        tags: ['Accounts'],
        summary: 'End this session',
        response: responses({ 200: Type.Object({ loggedOut: Type.Literal(true) }) }),
      },
    },
    async (request, reply) => {
      await endSession(deps, principalOf(request).principal.id);
      clearSessionCookie(reply, deps);
      return ok({ loggedOut: true as const });
    },
  );

  app.get(
    '/auth/session',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'getSession',
        tags: ['Accounts'],
        summary: 'Who is calling',
        response: responses({ 200: Type.Object({ user: User, principal: Principal }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      return ok({
        user: toUser(user),
        principal: { kind: principal.kind, id: principal.id, expiresAt: iso(principal.expiresAt) },
      });
    },
  );

  app.get(
    '/me',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'getProfile',
        tags: ['Profile'],
        summary: 'The account',
        response: responses({ 200: UserData }),
      },
    },
    async (request) => ok({ user: toUser(principalOf(request).user) }),
  );

  app.patch(
    '/me',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'updateProfile',
        tags: ['Profile'],
        summary: 'Update the profile',
        description: 'At least one of `name`, `company`.',
        body: PatchMeBody,
        response: responses({ 200: UserData }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const changes: { name?: string; company?: string; updatedAt: Date } = { updatedAt: deps.clock.now() };
      if (request.body.name !== undefined) changes.name = request.body.name;
      if (request.body.company !== undefined) changes.company = request.body.company;
      return ok({ user: toUser(await changeUser(deps, user.id, changes)) });
    },
  );

  app.post(
    '/me/password',
    {
      config: { auth: 'session', errors: ['invalid_credentials', 'weak_password'] },
      schema: {
        operationId: 'changePassword',
        tags: ['Profile'],
        summary: 'Change the password',
        description:
          'Ends every other session of the account and refreshes this session cookie. A wrong `currentPassword` is ' +
          '`401 invalid_credentials`; after 10 attempts in 15 minutes (counted per account with ' +
          '`POST /me/totp/disable`) every attempt is `429 rate_limited` with `Retry-After`.',
        body: ChangePasswordBody,
        response: responses({ 200: UserData }),
      },
    },
    async (request, reply) => {
      const { user, principal } = principalOf(request);
      const session = await changePassword(
        deps,
        requestContext(request, reply),
        { user, sessionId: principal.id },
        request.body,
      );
      setSessionCookie(reply, deps, session);
      return ok({ user: toUser(session.user) });
    },
  );
}
