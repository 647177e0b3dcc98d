import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { clearSessionCookie, setSessionCookie } from '../../http/cookies.ts';
import { ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { iso } from '../../lib/time.ts';
import {
  createSession,
  findUserByEmail,
  insertUser,
  revokeSession,
  updateUser,
} from './accounts.repository.ts';
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
  checkPassword,
  completeLogin,
  consumeSignupBudget,
  verifyCurrentPassword,
} from './accounts.service.ts';
import { assertPasswordPolicy, hashPassword } from './password.ts';

const UserData = Type.Object({ user: User });

/** Login hooks other modules plug into (two-step TOTP login lives with the TOTP module). */
export interface LoginExtensions {
  /** Called once the password is right; returns a response body to send instead of a session, or null. */
  secondFactor?: (
    user: import('./accounts.repository.ts').UserRow,
  ) => Promise<Record<string, unknown> | null>;
}

export function registerAccountRoutes(app: App, deps: Deps, extensions: LoginExtensions = {}): void {
  const { db } = deps.database;

  app.post(
    '/auth/signup',
    {
      config: { auth: 'none', rate: 'own' },
      schema: {
        tags: ['Accounts'],
        summary: 'Create an account',
        body: SignupBody,
        response: responses({ 201: UserData }),
      },
    },
    async (request, reply) => {
      if (deps.config.signup === 'closed')
        throw new AppError('signup_closed', 'Self-service signup is closed.');
      await consumeSignupBudget(deps, request, reply);
      const { email, password, name, company } = request.body;
      assertPasswordPolicy(password);
      if (await findUserByEmail(db, email))
        throw new AppError('email_taken', 'An account with this email exists.');
      const now = deps.clock.now();
      const passwordHash = await hashPassword(password);
      const user = await insertUser(
        db,
        { email, passwordHash, name: name ?? null, company: company ?? null },
        now,
      ).catch((error: unknown) => {
        if (
          String(
            (error as { cause?: { code?: string } })?.cause?.code ?? (error as { code?: string }).code,
          ) === '23505'
        ) {
          throw new AppError('email_taken', 'An account with this email exists.');
        }
        throw error;
      });
      const loggedIn = await completeLogin(deps, reply, user);
      return reply.code(201).send(ok({ user: toUser(loggedIn) }));
    },
  );

  app.post(
    '/auth/login',
    {
      config: { auth: 'none', rate: 'own' },
      schema: {
        tags: ['Accounts'],
        summary: 'Log in with email and password',
        description: 'With TOTP on, answers `{totpRequired: true, pendingToken}` and sets no cookie.',
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
      const user = await checkPassword(deps, request, reply, request.body.email, request.body.password);
      const pending = extensions.secondFactor ? await extensions.secondFactor(user) : null;
      if (pending) return ok(pending);
      const loggedIn = await completeLogin(deps, reply, user);
      return ok({ user: toUser(loggedIn) });
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['Accounts'],
        summary: 'End this session',
        response: responses({ 200: Type.Object({ loggedOut: Type.Literal(true) }) }),
      },
    },
    async (request, reply) => {
      const { principal } = principalOf(request);
      await revokeSession(db, principal.id, deps.clock.now());
      clearSessionCookie(reply, deps);
      return ok({ loggedOut: true as const });
    },
  );

  app.get(
    '/auth/session',
    {
      config: { auth: 'either' },
      schema: {
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
      schema: { tags: ['Profile'], summary: 'The account', response: responses({ 200: UserData }) },
    },
    async (request) => ok({ user: toUser(principalOf(request).user) }),
  );

  app.patch(
    '/me',
    {
      config: { auth: 'either' },
      schema: {
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
      return ok({ user: toUser(await updateUser(db, user.id, changes)) });
    },
  );

  app.post(
    '/me/password',
    {
      config: { auth: 'session' },
      schema: {
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
      await verifyCurrentPassword(deps, reply, user, request.body.currentPassword);
      assertPasswordPolicy(request.body.newPassword);
      const now = deps.clock.now();
      const passwordHash = await hashPassword(request.body.newPassword);
      const { updated, token, expiresAt } = await db.transaction(async (tx) => {
        const updated = await updateUser(tx, user.id, {
          passwordHash,
          mustChangePassword: false,
          tokenVersion: user.tokenVersion + 1,
          updatedAt: now,
        });
        await revokeSession(tx, principal.id, now);
        const { token, session } = await createSession(tx, updated, now);
        return { updated, token, expiresAt: session.expiresAt };
      });
      setSessionCookie(reply, deps, token, expiresAt);
      return ok({ user: toUser(updated) });
    },
  );
}
