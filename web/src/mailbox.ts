/**
 * The local mailbox page (`/#/mailbox`, sandbox only): what the service would have emailed (reset links, security
 * notices), newest first. It follows the API's rule: signed in, the account's own messages; signed out, only in a
 * browser on the machine the service runs on. The service answers 404 to anyone else, and wherever email really
 * goes out: the page then says there is no local mailbox here.
 */

import type { Static } from '@sinclair/typebox';
import type { MailboxMessage as MailboxMessageSchema } from '../../src/modules/notifications/notifications.schema.ts';
import { ApiError, get } from './api.ts';
import { type Child, formatTime, h, replace, showError, statusArea } from './dom.ts';
import { plainError } from './errors.ts';

/** A message as the service lists it (the server's schema, type only). */
type MailboxMessage = Static<typeof MailboxMessageSchema>;

/** A web address, without the sentence's punctuation after it. */
const WEB_ADDRESS = /(https?:\/\/[^\s<>"]*[^\s<>".,;:!?)])/;

/** A message's text with its web addresses as links (a reset link is followed with a click, not copied by hand). */
function withLinks(text: string): Child[] {
  return text
    .split(WEB_ADDRESS)
    .map((part, index) => (index % 2 === 1 ? h('a', { href: part, rel: 'noreferrer' }, part) : part));
}

export function mailboxPage(): HTMLElement {
  const list = h('div', { class: 'stack' });
  const status = statusArea();
  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh');
  async function load(): Promise<void> {
    replace(status);
    try {
      const { messages } = await get<{ messages: MailboxMessage[] }>('/sandbox/mailbox', { quiet401: true });
      replace(
        list,
        messages.length === 0
          ? h('p', { class: 'empty' }, 'No messages yet.')
          : messages.map((message) =>
              h(
                'article',
                { class: 'card', 'aria-label': message.subject },
                h('h2', null, message.subject),
                h('p', { class: 'muted' }, `To ${message.to} · ${formatTime(message.receivedAt)}`),
                h('pre', null, withLinks(message.text)),
              ),
            ),
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') {
        replace(
          list,
          h(
            'p',
            { class: 'empty' },
            'There is no local mailbox here. It opens only in a browser on the machine the service runs on, or ' +
              'with your own messages once you log in; a service that sends real email has none.',
          ),
        );
        return;
      }
      showError(status, plainError(error));
    }
  }
  refresh.addEventListener('click', () => void load());
  void load();
  return h(
    'div',
    { class: 'view mailbox' },
    h('h1', { tabindex: -1 }, 'Local mailbox'),
    h(
      'p',
      null,
      'This sandbox sends no email: messages land here instead. ',
      h('a', { href: '/' }, 'Back to sealpay'),
    ),
    refresh,
    status,
    list,
  );
}
