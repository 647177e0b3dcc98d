/** Sign up, log in (password, then TOTP when enabled), and passkey login: shared by the dashboard and the claim page. */

import { post } from './api.ts';
import { field, h, onSubmit, replace, showError, statusArea, uid } from './dom.ts';
import { plainError } from './errors.ts';
import { newPasswordInput, PASSWORD_HINT } from './password.ts';
import { forgotPasswordForm, LOCKOUT_MESSAGE, loginFailures } from './password-reset.ts';
import type { User } from './types.ts';
import {
  getPasskey,
  passkeysUnavailableReason,
  type RequestOptionsJSON,
  webauthnSupported,
} from './webauthn.ts';

export interface AuthPanelOptions {
  heading: string;
  intro?: string;
  mode?: 'signup' | 'login';
  onSignedIn: (user: User) => void;
}

/** The input of a 6-digit authenticator code (the password manager's one-time-code field). */
export function totpCodeInput(): HTMLInputElement {
  return h('input', {
    type: 'text',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]{6}',
    maxlength: 6,
    required: true,
  });
}

export function authPanel(options: AuthPanelOptions): HTMLElement {
  const headingId = uid('auth-heading');
  const body = h('div', { class: 'auth-body' });
  const status = statusArea();
  const signupTab = h('button', { type: 'button', class: 'tab' }, 'Create an account');
  const loginTab = h('button', { type: 'button', class: 'tab' }, 'Log in');
  const section = h(
    'section',
    { class: 'card auth', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, options.heading),
    options.intro ? h('p', null, options.intro) : null,
    h('div', { class: 'tabs', role: 'group', 'aria-label': 'Account' }, signupTab, loginTab),
    body,
    status,
  );

  const show = (mode: 'signup' | 'login') => {
    signupTab.setAttribute('aria-pressed', String(mode === 'signup'));
    loginTab.setAttribute('aria-pressed', String(mode === 'login'));
    replace(status);
    replace(body, mode === 'signup' ? signupForm() : loginForm());
  };
  signupTab.addEventListener('click', () => show('signup'));
  loginTab.addEventListener('click', () => show('login'));

  function signupForm(): HTMLFormElement {
    const name = h('input', { type: 'text', autocomplete: 'name', maxlength: 200 });
    const email = h('input', { type: 'email', autocomplete: 'email', required: true });
    const password = newPasswordInput();
    const submit = h('button', { type: 'submit' }, 'Create account');
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Create an account' },
      field('Your name (optional)', name),
      field('Email', email),
      field('Password', password, PASSWORD_HINT),
      submit,
    );
    onSubmit(form, submit, status, async () => {
      const data = await post<{ user: User }>(
        '/auth/signup',
        {
          email: email.value.trim(),
          password: password.value,
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
        },
        { quiet401: true },
      );
      options.onSignedIn(data.user);
    });
    return form;
  }

  function loginForm(): HTMLElement {
    const email = h('input', { type: 'email', autocomplete: 'username webauthn', required: true });
    const password = h('input', { type: 'password', autocomplete: 'current-password', required: true });
    const submit = h('button', { type: 'submit' }, 'Log in');
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Log in' },
      field('Email', email),
      field('Password', password),
      submit,
    );
    onSubmit(form, submit, status, async () => {
      const data = await post<{ user: User } | { totpRequired: true; pendingToken: string }>(
        '/auth/login',
        { email: email.value.trim(), password: password.value },
        { quiet401: true },
      ).catch((error: unknown) => {
        // A locked-out login answers like a wrong password: past the limit, say what to do instead.
        loginFailures.record(error);
        throw loginFailures.lockedOut() ? new Error(LOCKOUT_MESSAGE) : error;
      });
      loginFailures.clear();
      if ('totpRequired' in data) replace(body, totpForm(data.pendingToken));
      else options.onSignedIn(data.user);
    });
    const forgot = h('button', { type: 'button', class: 'link' }, 'Forgot password?');
    forgot.addEventListener('click', () => {
      replace(status);
      replace(
        body,
        forgotPasswordForm(email.value.trim(), () => show('login')),
      );
    });
    // At an IP address no passkey can work: no button, and the words say where one would.
    const unavailable = webauthnSupported() ? passkeysUnavailableReason() : null;
    const passkey =
      webauthnSupported() && !unavailable
        ? h('button', { type: 'button', class: 'secondary' }, 'Log in with a passkey')
        : null;
    passkey?.addEventListener('click', async () => {
      replace(status);
      passkey.disabled = true;
      try {
        const { options: requestOptions } = await post<{ options: RequestOptionsJSON }>(
          '/auth/passkey/options',
          email.value.trim() ? { email: email.value.trim() } : {},
          { quiet401: true },
        );
        const credential = await getPasskey(requestOptions);
        const data = await post<{ user: User }>('/auth/passkey/login', { credential }, { quiet401: true });
        options.onSignedIn(data.user);
      } catch (error) {
        showError(status, plainError(error));
      } finally {
        passkey.disabled = false;
      }
    });
    return h(
      'div',
      { class: 'stack' },
      form,
      forgot,
      passkey ? h('p', { class: 'or' }, 'or') : null,
      passkey,
      unavailable ? h('p', { class: 'muted small passkey-unavailable' }, unavailable) : null,
    );
  }

  function totpForm(pendingToken: string, recovery = false): HTMLFormElement {
    const code = recovery
      ? h('input', { type: 'text', autocomplete: 'off', spellcheck: false, maxlength: 32, required: true })
      : totpCodeInput();
    const submit = h('button', { type: 'submit' }, 'Verify');
    const swap = h(
      'button',
      { type: 'button', class: 'link' },
      recovery ? 'Use the authenticator app instead' : 'Lost your device? Use a recovery code',
    );
    swap.addEventListener('click', () => {
      replace(status);
      replace(body, totpForm(pendingToken, !recovery));
    });
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Two-factor code' },
      h('p', null, 'Two-factor authentication is on for this account.'),
      recovery
        ? field(
            'Recovery code',
            code,
            'One of the codes you saved when you turned two-factor on. Each works once.',
          )
        : field('6-digit code from your authenticator app', code),
      submit,
      swap,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      replace(status);
      submit.disabled = true;
      try {
        const data = await post<{ user: User }>(
          '/auth/login/totp',
          { pendingToken, code: code.value.trim() },
          { quiet401: true },
        );
        options.onSignedIn(data.user);
      } catch (error) {
        loginFailures.record(error);
        showError(status, loginFailures.lockedOut() ? LOCKOUT_MESSAGE : plainError(error));
        code.select();
      } finally {
        submit.disabled = false;
      }
    });
    window.setTimeout(() => code.focus(), 0);
    return form;
  }

  show(options.mode ?? 'signup');
  return section;
}
