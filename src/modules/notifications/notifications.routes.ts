import { Type } from '@sinclair/typebox';
import { isLocalMailbox } from '../../adapters/email/index.ts';
import type { Deps } from '../../deps.ts';
import { ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { MailboxMessage, MailboxQuery } from './notifications.schema.ts';

/** The local mailbox, read over HTTP: only where it is the email sender (sandbox networks without SMTP). */
export function registerNotificationRoutes(app: App, deps: Deps): void {
  app.get(
    '/sandbox/mailbox',
    {
      config: { auth: 'none', errors: ['not_found'] },
      schema: {
        tags: ['Sandbox'],
        operationId: 'listMailboxMessages',
        summary: 'The local mailbox (sandbox only)',
        description:
          'What the service would have emailed (password reset links, security notices), newest first, on the ' +
          'sandbox networks without `SMTP_URL`: the messages kept under `DATA_DIR/mailbox`. `404 not_found` ' +
          'wherever email goes out over SMTP or is not configured (always in production).',
        querystring: MailboxQuery,
        response: responses({ 200: Type.Object({ messages: Type.Array(MailboxMessage) }) }),
      },
    },
    async (request) => {
      const mailbox = deps.email;
      if (deps.config.environment !== 'sandbox' || !isLocalMailbox(mailbox)) {
        throw new AppError('not_found', 'There is no local mailbox on this service.');
      }
      const { to, limit } = request.query;
      return ok({ messages: await mailbox.list({ limit: limit ?? 50, ...(to ? { to } : {}) }) });
    },
  );
}
