/** Settings: profile, password, two-factor (TOTP), passkeys, API keys. */

import { del, get, patch, post } from '../api.ts';
import {
  copyButton,
  field,
  formatDate,
  formatTime,
  h,
  onSubmit,
  replace,
  showError,
  showInfo,
  statusArea,
  uid,
} from '../dom.ts';
import { plainError } from '../errors.ts';
import { qrCanvas } from '../qr.ts';
import type { ApiKeyRecord, PasskeyRecord, User } from '../types.ts';
import { type CreationOptionsJSON, createPasskey, webauthnSupported } from '../webauthn.ts';
import type { Ctx } from './context.ts';

function section(title: string, ...children: (HTMLElement | null)[]): HTMLElement {
  const id = uid('h');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

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
  const next = h('input', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: 10,
    maxlength: 200,
  });
  const again = h('input', { type: 'password', autocomplete: 'new-password', required: true });
  const submit = h('button', { type: 'submit' }, 'Change password');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Change password' },
    field('Current password', current),
    field(
      'New password',
      next,
      '10 to 200 characters, with an uppercase letter, a lowercase letter and a digit. Other sessions are signed out.',
    ),
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
      showError(status, plainError(error));
    } finally {
      submit.disabled = false;
    }
  });
  return section('Password', form);
}

function twoFactor(ctx: Ctx): HTMLElement {
  const body = h('div', { class: 'stack' });
  const status = statusArea();

  const codeInput = () =>
    h('input', {
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      pattern: '[0-9]{6}',
      maxlength: 6,
      required: true,
    });

  function enabledView(): void {
    const pw = h('input', { type: 'password', autocomplete: 'current-password', required: true });
    const code = codeInput();
    const submit = h('button', { type: 'submit', class: 'danger' }, 'Turn off two-factor');
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Turn off two-factor authentication' },
      h(
        'p',
        null,
        h('strong', null, 'Two-factor authentication is on.'),
        ' Logging in asks for a code from your app.',
      ),
      field('Password', pw),
      field('Current 6-digit code', code),
      submit,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await post('/me/totp/disable', { password: pw.value, code: code.value.trim() });
        ctx.setUser({ ...ctx.user, totpEnabled: false });
        disabledView();
        showInfo(status, 'Two-factor authentication is off.');
      } catch (error) {
        showError(status, plainError(error));
        submit.disabled = false;
      }
    });
    replace(body, form);
  }

  function disabledView(): void {
    const start = h('button', { type: 'button' }, 'Set up two-factor');
    start.addEventListener('click', async () => {
      start.disabled = true;
      replace(status);
      try {
        const setup = await post<{ secret: string; otpauthUrl: string }>('/me/totp/setup');
        enrollView(setup.secret, setup.otpauthUrl);
      } catch (error) {
        showError(status, plainError(error));
        start.disabled = false;
      }
    });
    replace(
      body,
      h(
        'p',
        null,
        'Two-factor authentication is off. Turn it on to ask for a code from an authenticator app at login.',
      ),
      start,
    );
  }

  function enrollView(secret: string, otpauthUrl: string): void {
    const code = codeInput();
    const submit = h('button', { type: 'submit' }, 'Turn on two-factor');
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Confirm two-factor setup' },
      field('6-digit code shown by the app', code),
      submit,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await post('/me/totp/enable', { code: code.value.trim() });
        ctx.setUser({ ...ctx.user, totpEnabled: true });
        enabledView();
        showInfo(status, 'Two-factor authentication is on.');
      } catch (error) {
        showError(status, plainError(error));
        submit.disabled = false;
        code.select();
      }
    });
    replace(
      body,
      h(
        'p',
        null,
        'Scan this QR code with an authenticator app, or type the secret into it. Then enter the code it shows.',
      ),
      h(
        'div',
        { class: 'code-block' },
        qrCanvas(otpauthUrl, 'QR code for your authenticator app'),
        h(
          'dl',
          null,
          h('dt', null, 'Secret'),
          h('dd', null, h('code', { class: 'totp-secret' }, secret), ' ', copyButton(secret, 'Copy secret')),
        ),
      ),
      form,
    );
    code.focus();
  }

  if (ctx.user.totpEnabled) enabledView();
  else disabledView();
  return section('Two-factor authentication', body, status);
}

function passkeys(): HTMLElement {
  const list = h('div');
  const status = statusArea();
  async function load(): Promise<void> {
    const { passkeys } = await get<{ passkeys: PasskeyRecord[] }>('/me/passkeys');
    replace(
      list,
      passkeys.length === 0
        ? h('p', { class: 'empty' }, 'No passkeys yet.')
        : h(
            'ul',
            { class: 'plain-list passkeys' },
            passkeys.map((p) =>
              h(
                'li',
                null,
                h('strong', null, p.deviceName ?? 'Passkey'),
                h(
                  'span',
                  { class: 'muted' },
                  ` · added ${formatDate(p.createdAt)} · last used ${formatTime(p.lastUsedAt)}`,
                ),
              ),
            ),
          ),
    );
  }
  const deviceName = h('input', { type: 'text', maxlength: 100, value: 'This device' });
  const submit = h('button', { type: 'submit' }, 'Add a passkey');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Add a passkey' },
    field('Passkey name', deviceName, 'To recognise it later, e.g. “Work laptop”.'),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    const { options } = await post<{ options: CreationOptionsJSON }>('/me/passkeys/options');
    const credential = await createPasskey(options);
    await post('/me/passkeys/register', { credential, deviceName: deviceName.value.trim() || 'Passkey' });
    showInfo(status, 'Passkey added. You can now log in with it.');
    await load();
  });
  void load().catch((error) => showError(status, plainError(error)));
  return section(
    'Passkeys',
    h('p', null, 'Log in without a password, with your device’s screen lock or a security key.'),
    list,
    webauthnSupported() ? form : h('p', { class: 'muted' }, 'This browser does not support passkeys.'),
    status,
  );
}

function apiKeys(): HTMLElement {
  const list = h('div');
  const status = statusArea();
  const created = h('div');

  async function load(): Promise<void> {
    const { keys } = await get<{ keys: ApiKeyRecord[] }>('/keys');
    const active = keys.filter((k) => !k.revokedAt);
    replace(
      list,
      active.length === 0
        ? h('p', { class: 'empty' }, 'No active API keys.')
        : h(
            'table',
            { class: 'responsive keys' },
            h('caption', { class: 'visually-hidden' }, 'Active API keys'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Name', 'Key', 'Created', 'Last used', 'Expires', ''].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h('tbody', null, active.map(keyRow)),
          ),
    );
  }

  function keyRow(key: ApiKeyRecord): HTMLTableRowElement {
    const revoke = h('button', { type: 'button', class: 'danger small' }, 'Revoke');
    revoke.setAttribute('aria-label', `Revoke API key ${key.name}`);
    const cell = h('td', { 'data-label': 'Action' }, revoke);
    revoke.addEventListener('click', () => {
      const yes = h('button', { type: 'button', class: 'danger small' }, 'Yes, revoke');
      const no = h('button', { type: 'button', class: 'secondary small' }, 'Cancel');
      yes.setAttribute('aria-label', `Yes, revoke API key ${key.name}`);
      no.addEventListener('click', () => {
        replace(cell, revoke);
        revoke.focus();
      });
      yes.addEventListener('click', async () => {
        yes.disabled = true;
        try {
          await del(`/keys/${key.id}`);
          showInfo(status, `Key “${key.name}” revoked.`);
          await load();
        } catch (error) {
          showError(status, plainError(error));
          yes.disabled = false;
        }
      });
      replace(cell, h('span', null, 'Revoke now? Calls using it fail at once. '), yes, ' ', no);
      yes.focus();
    });
    return h(
      'tr',
      null,
      h('td', { 'data-label': 'Name' }, key.name),
      h('td', { 'data-label': 'Key' }, h('code', null, `${key.keyPrefix}…`)),
      h('td', { 'data-label': 'Created' }, formatDate(key.createdAt)),
      h('td', { 'data-label': 'Last used' }, formatTime(key.lastUsedAt)),
      h('td', { 'data-label': 'Expires' }, key.expiresAt ? formatDate(key.expiresAt) : 'never'),
      cell,
    );
  }

  const name = h('input', { type: 'text', required: true, maxlength: 100, autocomplete: 'off' });
  const expires = h('input', { type: 'number', min: 1, max: 365, class: 'short' });
  const submit = h('button', { type: 'submit' }, 'Create key');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Create an API key' },
    field('Key name', name, 'What uses it, e.g. “billing server”.'),
    field('Expires after (days, optional)', expires, '1 to 365; leave empty for no expiry.'),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    const days = expires.value ? Number.parseInt(expires.value, 10) : undefined;
    const data = await post<{ key: ApiKeyRecord; plaintext: string }>('/keys', {
      name: name.value.trim(),
      ...(days ? { expiresInDays: days } : {}),
    });
    form.reset();
    const headingId = uid('h');
    const panel = h(
      'div',
      { class: 'created', role: 'region', 'aria-labelledby': headingId, tabindex: -1 },
      h('h3', { id: headingId }, `New key “${data.key.name}”`),
      h('p', null, h('strong', null, 'Copy it now: it is shown only once and cannot be recovered.')),
      h(
        'p',
        null,
        h('code', { class: 'secret-key' }, data.plaintext),
        ' ',
        copyButton(data.plaintext, 'Copy key'),
      ),
      h(
        'p',
        { class: 'muted' },
        'Send it as “Authorization: Bearer <key>”. Keys can move funds but cannot manage keys, passwords or 2FA.',
      ),
    );
    const dismiss = h('button', { type: 'button', class: 'secondary small' }, 'I have saved it');
    dismiss.addEventListener('click', () => {
      replace(created);
      name.focus();
    });
    panel.append(dismiss);
    replace(created, panel);
    panel.focus();
    await load();
  });
  void load().catch((error) => showError(status, plainError(error)));
  return section('API keys', created, form, status, list);
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
    apiKeys(),
  );
}
