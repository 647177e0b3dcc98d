/** Settings: profile, password, two-factor (TOTP), passkeys, API keys, webhooks. */

import { get, patch, post } from '../../api.ts';
import { field, h, onSubmit, section, showError, showInfo, statusArea } from '../../dom.ts';
import { plainErrorOn, WRONG_CURRENT_PASSWORD } from '../../errors.ts';
import { newPasswordInput, PASSWORD_HINT } from '../../password.ts';
import type { User } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { apiKeys } from './api-keys.ts';
import { passkeys } from './passkeys.ts';
import { twoFactor } from './two-factor.ts';
import { webhooks } from './webhooks.ts';

function profile(ctx: Ctx): HTMLElement {
  const status = statusArea();
  const name = h('input', { type: 'text', maxlength: 200, autocomplete: 'name', value: ctx.user.name ?? '' });
  const company = h('input', {
    type: 'text',
    maxlength: 200,
    autocomplete: 'organization',
    value: ctx.user.company ?? '',
  });
  const submit = h('button', { type: 'submit' }, 'Save profile');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Profile' },
    h('p', null, 'Email: ', h('strong', null, ctx.user.email)),
    field('Name', name),
    field('Company', company, 'Shown to letter recipients as the sender when set.'),
    submit,
    status,
  );
  onSubmit(form, submit, status, async () => {
    const { user } = await patch<{ user: User }>('/me', {
      name: name.value.trim(),
      company: company.value.trim(),
    });
    ctx.setUser(user);
    showInfo(status, 'Profile saved.');
  });
  return section('Profile', form);
}

function password(ctx: Ctx): HTMLElement {
  const status = statusArea();
  const current = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const next = newPasswordInput();
  const again = h('input', { type: 'password', autocomplete: 'new-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Change password');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Change password' },
    field('Current password', current),
    field('New password', next, `${PASSWORD_HINT} Other sessions are signed out.`),
    field('New password again', again),
    submit,
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (next.value !== again.value) {
      showError(status, 'The two new passwords differ.');
      again.focus();
      return;
    }
    submit.disabled = true;
    try {
      const { user } = await post<{ user: User }>('/me/password', {
        currentPassword: current.value,
        newPassword: next.value,
      });
      ctx.setUser(user);
      form.reset();
      showInfo(status, 'Password changed. Your other sessions were signed out.');
    } catch (error) {
      showError(status, plainErrorOn(error, WRONG_CURRENT_PASSWORD));
    } finally {
      submit.disabled = false;
    }
  });
  return section('Password', form);
}

export async function settingsView(ctx: Ctx): Promise<HTMLElement> {
  try {
    const { user } = await get<{ user: User }>('/me');
    ctx.setUser(user);
  } catch {
    // The stored user is fine for a first paint.
  }
  return h(
    'div',
    { class: 'view settings' },
    h('h1', { tabindex: -1 }, 'Settings'),
    h('div', { class: 'columns' }, profile(ctx), password(ctx)),
    h('div', { class: 'columns' }, twoFactor(ctx), passkeys()),
    apiKeys(ctx),
    webhooks(),
  );
}
