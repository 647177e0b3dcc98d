/**
 * Account recovery in the web app: the "Forgot password?" form, the reset page the emailed link opens
 * (`/#/reset-password?token=…`: the token stays in the fragment, never sent to a server but by this page's own call),
 * and the words after too many failed logins.
 */

import { ApiError, post } from './api.ts';
import { field, h, onSubmit, replace, showInfo, statusArea } from './dom.ts';
import { newPasswordInput, PASSWORD_HINT } from './password.ts';

/** The service's login limit (10 failures per 15 minutes per IP), as the interface gives it. */
const LOGIN_FAILURES_BEFORE_LOCKOUT = 10;
const FAILURES_KEY = 'sealpay.loginFailures';

export const LOCKOUT_MESSAGE = 'Too many attempts: wait 15 minutes or reset your password.';

/**
 * Failed logins this browser has seen in the last 15 minutes. The service answers a locked-out login exactly like a
 * wrong password (by design), so the app counts what it saw to tell people what to do.
 */
export const loginFailures = {
  seen(): number {
    try {
      const stored = JSON.parse(sessionStorage.getItem(FAILURES_KEY) ?? '[]') as number[];
      return stored.filter((at) => Date.now() - at < 15 * 60_000).length;
    } catch {
      return 0;
    }
  },
  record(error: unknown): void {
    if (!(error instanceof ApiError) || !['invalid_credentials', 'invalid_totp_code'].includes(error.code))
      return;
    try {
      const stored = JSON.parse(sessionStorage.getItem(FAILURES_KEY) ?? '[]') as number[];
      const recent = stored.filter((at) => Date.now() - at < 15 * 60_000);
      sessionStorage.setItem(FAILURES_KEY, JSON.stringify([...recent, Date.now()]));
    } catch {
      // Storage refused (private mode): the count simply starts over.
    }
  },
  clear(): void {
    try {
      sessionStorage.removeItem(FAILURES_KEY);
    } catch {
      // Nothing to clear.
    }
  },
  /** True once the tenth failure has been seen: further attempts are refused whatever the password. */
  lockedOut(): boolean {
    return this.seen() >= LOGIN_FAILURES_BEFORE_LOCKOUT;
  },
};

/** "Forgot password?": asks for the address and says the same whatever the service knows of it. */
export function forgotPasswordForm(email: string, onBack: () => void): HTMLElement {
  const status = statusArea();
  const address = h('input', { type: 'email', autocomplete: 'email', required: true, value: email });
  const submit = h('button', { type: 'submit' }, 'Email me a reset link');
  const back = h('button', { type: 'button', class: 'secondary' }, 'Back to log in');
  back.addEventListener('click', onBack);
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Reset your password' },
    h('p', null, 'Enter the email of your account. We will send a link to choose a new password.'),
    field('Email', address),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    await post('/auth/password/forgot', { email: address.value.trim() }, { quiet401: true });
    showInfo(
      status,
      `If an account uses ${address.value.trim()}, a reset link is on its way. It works once, for 30 minutes.`,
    );
  });
  return h('div', { class: 'stack' }, form, back, status);
}

/** The token of a reset link (`#/reset-password?token=…`), or null when the address is not one. */
export function resetTokenOf(hash: string): string | null {
  const match = /^#\/reset-password\?(.*)$/.exec(hash);
  if (!match) return null;
  return new URLSearchParams(match[1]).get('token');
}

/** The page of the emailed link: a new password, twice; then back to log in (two-factor still asks its code). */
export function resetPasswordPage(token: string, onDone: () => void): HTMLElement {
  const status = statusArea();
  const next = newPasswordInput();
  const again = h('input', { type: 'password', autocomplete: 'new-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Set new password');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Choose a new password' },
    field('New password', next, PASSWORD_HINT),
    field('New password again', again),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    if (next.value !== again.value) throw new Error('The two new passwords differ.');
    await post('/auth/password/reset', { token, newPassword: next.value }, { quiet401: true });
    loginFailures.clear();
    // The token is spent: it leaves the address bar and the history entry.
    history.replaceState(null, '', '/');
    const login = h('button', { type: 'button' }, 'Log in');
    login.addEventListener('click', onDone);
    replace(
      form,
      h('p', { class: 'info', role: 'status' }, 'Your password is changed. Every session was signed out.'),
      login,
    );
  });
  return h(
    'section',
    { class: 'card auth', 'aria-label': 'Reset your password' },
    h('h2', null, 'Choose a new password'),
    form,
    status,
  );
}
