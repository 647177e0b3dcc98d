/**
 * The words of account emails: a password reset link, and the security notices (each says what changed, when, and
 * what to do if it was not you). Plain text with a small HTML twin; every value put into HTML is escaped.
 */
import type { EmailMessage } from '../../adapters/email/index.ts';

export const NOTICE_KINDS = [
  'password_changed',
  'totp_disabled',
  'passkey_added',
  'api_key_created',
  'recovery_code_used',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];
export type EmailKind = 'password_reset' | NoticeKind;

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

function htmlOf(paragraphs: string[], link?: { href: string; label: string }): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n');
  const button = link ? `\n<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p>` : '';
  return `<!doctype html>\n<html><body>\n${body}${button}\n</body></html>\n`;
}

/** The reset link points at the web app; the token travels in the fragment, which browsers never send to a server. */
export function resetLinkOf(publicOrigin: string, token: string): string {
  return `${publicOrigin}/#/reset-password?token=${encodeURIComponent(token)}`;
}

export function passwordResetEmail(to: string, link: string, minutes: number): EmailMessage {
  const paragraphs = [
    'Someone (we hope you) asked to reset the password of your sealpay account.',
    `Open this link within ${minutes} minutes to choose a new password. It works once.`,
    'If you did not ask for this, ignore this email: your password stays as it is.',
  ];
  return {
    to,
    subject: 'Reset your sealpay password',
    text: `${paragraphs[0]}\n\n${paragraphs[1]}\n\n${link}\n\n${paragraphs[2]}\n`,
    html: htmlOf(paragraphs, { href: link, label: 'Choose a new password' }),
  };
}

const NOTICES: Record<NoticeKind, { subject: string; what: (detail: string | null) => string }> = {
  password_changed: {
    subject: 'Your sealpay password was changed',
    what: () => 'The password of your sealpay account was changed, and every session was signed out.',
  },
  totp_disabled: {
    subject: 'Two-factor authentication was turned off',
    what: () =>
      'Two-factor authentication (authenticator app codes) was turned off for your sealpay account.',
  },
  passkey_added: {
    subject: 'A passkey was added to your sealpay account',
    what: (name) => `A passkey${name ? ` named “${name}”` : ''} was added to your sealpay account.`,
  },
  api_key_created: {
    subject: 'A new API key was created',
    what: (name) => `An API key${name ? ` named “${name}”` : ''} was created for your sealpay account.`,
  },
  recovery_code_used: {
    subject: 'A recovery code was used to log in',
    what: (left) =>
      `A two-factor recovery code was used to log in to your sealpay account${left === null ? '' : `; ${left} left`}.`,
  },
};

export function noticeEmail(
  kind: NoticeKind,
  to: string,
  at: Date,
  detail: string | null,
  publicOrigin: string,
): EmailMessage {
  const notice = NOTICES[kind];
  const paragraphs = [
    notice.what(detail),
    `When: ${at.toISOString().replace('T', ' ').slice(0, 16)} UTC.`,
    'If this was you, there is nothing to do. If it was not, reset your password now and review your passkeys, ' +
      'API keys and two-factor settings.',
  ];
  return {
    to,
    subject: notice.subject,
    text: `${paragraphs.join('\n\n')}\n\n${publicOrigin}/\n`,
    html: htmlOf(paragraphs, { href: `${publicOrigin}/`, label: 'Open sealpay' }),
  };
}
