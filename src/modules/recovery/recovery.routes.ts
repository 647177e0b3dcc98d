import type { Deps } from '../../deps.ts';
import { ok, responses } from '../../http/envelope.ts';
import { requestContext } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { requestPasswordReset, resetPassword } from './password-reset.service.ts';
import {
  ForgotPasswordBody,
  ForgotPasswordData,
  ResetPasswordBody,
  ResetPasswordData,
} from './recovery.schema.ts';

/** Password reset by email: ask for a link, then set a new password with its token. */
export function registerRecoveryRoutes(app: App, deps: Deps): void {
  app.post(
    '/auth/password/forgot',
    {
      config: { auth: 'none', rate: 'own' },
      schema: {
        tags: ['Accounts'],
        operationId: 'requestPasswordReset',
        summary: 'Email a password reset link',
        description:
          'Answers `202 {accepted: true}` whether or not the address has an account, in about the same time. ' +
          'When it has one (enabled), a link valid 30 minutes and once is emailed. `429 rate_limited` past ' +
          '`RATE_LIMIT_PASSWORD_RESETS_PER_HOUR` (10) requests per IP; an address gets at most 3 links an hour.',
        body: ForgotPasswordBody,
        response: responses({ 202: ForgotPasswordData }),
      },
    },
    async (request, reply) => {
      await requestPasswordReset(deps, requestContext(request, reply), request.body.email);
      return reply.code(202).send(ok({ accepted: true as const }));
    },
  );

  app.post(
    '/auth/password/reset',
    {
      config: { auth: 'none', rate: 'own', errors: ['invalid_reset_token', 'weak_password'] },
      schema: {
        tags: ['Accounts'],
        operationId: 'resetPassword',
        summary: 'Set a new password with a reset token',
        description:
          'Spends the token (single use) and sets the password: every session of the account ends, two-factor ' +
          'stays on (the next login asks for the code), and the account is emailed a notice. Not subject to the ' +
          'login lock-out, which it lifts at the calling IP for this account alone (other accounts stay locked out ' +
          'there until the 15 minutes end). Errors: `400 invalid_reset_token` (used, expired ' +
          'or unknown), `400 weak_password`, `429 rate_limited`.',
        body: ResetPasswordBody,
        response: responses({ 200: ResetPasswordData }),
      },
    },
    async (request, reply) => {
      await resetPassword(deps, requestContext(request, reply), request.body);
      return ok({ passwordReset: true as const });
    },
  );
}
