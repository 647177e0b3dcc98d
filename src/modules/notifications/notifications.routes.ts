import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { UserRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { type CredentialResolvers, SESSION_COOKIE } from '../../http/auth.ts';
import { ok, responses } from '../../http/envelope.ts';
import { isAddressedToUs } from '../../http/host-check.ts';
import { isFromThisMachine } from '../../http/request-context.ts';
import type { App } from '../../http/types.ts';
import { isAppError } from '../../lib/errors.ts';
import { MailboxMessage, MailboxQuery } from './notifications.schema.ts';
import { hasLocalMailbox, type MailboxReader, readMailbox } from './notifications.service.ts';

/**
 * The account of the request's session cookie, or null: no cookie, a session that ended, or a disabled account. An
 * API key does not count: it may move money but must not read the account's password reset links.
 */
async function sessionAccount(
  deps: Deps,
  resolveSession: CredentialResolvers['session'],
  request: FastifyRequest,
): Promise<UserRow | null> {
  const token = request.cookies[SESSION_COOKIE];
  if (!token) return null;
  try {
    const { user } = await resolveSession(deps, token, deps.clock.now());
    return user.disabledAt ? null : user;
  } catch (error) {
    if (isAppError(error) && error.code === 'session_expired') return null;
    throw error;
  }
}

/**
 * The local mailbox, read over HTTP: only where it is the email sender (sandbox networks without SMTP). Sessions
 * are resolved by the accounts module (src/app.ts passes its resolver), which itself queues notices here.
 */
export function registerNotificationRoutes(
  app: App,
  deps: Deps,
  resolveSession: CredentialResolvers['session'],
): void {
  app.get(
    '/sandbox/mailbox',
    {
      config: { auth: 'none', errors: ['not_found'] },
      schema: {
        // Where there is no local mailbox (production, SMTP) the route answers only 404: not in the document.
        hide: !hasLocalMailbox(deps),
        tags: ['Sandbox'],
        operationId: 'listMailboxMessages',
        summary: 'The local mailbox (sandbox only; local, or your own messages)',
        description:
          'What the service would have emailed (password reset links, security notices), newest first, on the ' +
          'sandbox networks without `SMTP_URL`: the messages kept under `DATA_DIR/mailbox`. Like a local mail ' +
          "catcher it is the developer's own inbox. With a browser session (from anywhere) it lists only the " +
          "messages to the signed-in account's email; a `to` naming another address finds none. Without a " +
          'session it answers only requests straight from the machine the service runs on: the TCP peer is a ' +
          'loopback address, the request carries no `X-Forwarded-For`, `Forwarded`, `X-Real-IP` or `Via` ' +
          "header, whatever `TRUST_PROXY` says, and its `Host` is the public origin's host or a loopback name " +
          '(`localhost`, `127.0.0.1`, `[::1]`; against DNS rebinding). API keys do not count. Every other request, and every request ' +
          'wherever email goes out over SMTP or is not configured (always in production), is `404 not_found`.',
        querystring: MailboxQuery,
        response: responses({ 200: Type.Object({ messages: Type.Array(MailboxMessage) }) }),
      },
    },
    async (request) => {
      const account = await sessionAccount(deps, resolveSession, request);
      const reader: MailboxReader = account
        ? { account: { email: account.email } }
        : // A page whose name was rebound to 127.0.0.1 is a loopback peer too: it names itself in Host.
          isFromThisMachine(request) && isAddressedToUs(request, deps.config.publicOrigin)
          ? 'this-machine'
          : null;
      const { to, limit } = request.query;
      return ok({ messages: await readMailbox(deps, reader, { to, limit: limit ?? 50 }) });
    },
  );
}
