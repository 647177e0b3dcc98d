/** Two-factor authentication (TOTP): enroll with a QR code, confirm, and disable with password and code. */

import { post } from '../../api.ts';
import { totpCodeInput } from '../../auth.ts';
import { copyButton, field, h, replace, section, showError, showInfo, statusArea } from '../../dom.ts';
import { plainError, plainErrorOn, WRONG_CURRENT_PASSWORD } from '../../errors.ts';
import { qrCanvas } from '../../qr.ts';
import type { Ctx } from '../context.ts';
import { recoveryCodesPanel, regenerateRecoveryCodes } from './recovery-codes.ts';

export function twoFactor(ctx: Ctx): HTMLElement {
  const body = h('div', { class: 'stack' });
  const status = statusArea();

  function enabledView(codes: string[] | null = null): void {
    const pw = h('input', { type: 'password', autocomplete: 'current-password', required: true });
    // A recovery code is accepted too: a person who lost the device turns two-factor off with one.
    const code = h('input', { type: 'text', autocomplete: 'one-time-code', maxlength: 32, required: true });
    const submit = h('button', { type: 'submit', class: 'danger' }, 'Turn off two-factor');
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Turn off two-factor authentication' },
      field('Password', pw),
      field('Current 6-digit code or a recovery code', code),
      submit,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await post('/me/totp/disable', { password: pw.value, code: code.value.trim() });
        ctx.setUser({ ...ctx.user, totpEnabled: false, recoveryCodesRemaining: 0 });
        disabledView();
        showInfo(status, 'Two-factor authentication is off.');
      } catch (error) {
        showError(status, plainErrorOn(error, WRONG_CURRENT_PASSWORD));
        submit.disabled = false;
      }
    });
    const shown = h('div', null, codes ? recoveryCodesPanel(codes, ctx.user.email) : null);
    const left = h('p', null, `Recovery codes left: ${ctx.user.recoveryCodesRemaining}.`);
    const regenerate = regenerateRecoveryCodes(ctx, (fresh) => {
      replace(shown, recoveryCodesPanel(fresh, ctx.user.email));
      left.textContent = `Recovery codes left: ${fresh.length}.`;
    });
    // Both actions ask for the same password and code: one form at a time, chosen by name, so that two identical
    // forms are never stacked (issue 25 item 15).
    const slot = h('div', { class: 'stack' });
    const choose = (open: HTMLElement, button: HTMLButtonElement) => {
      for (const other of [newCodes, turnOff]) other.setAttribute('aria-expanded', String(other === button));
      replace(slot, open);
      open.querySelector('input')?.focus();
    };
    const newCodes = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-expanded': 'false' },
      'New recovery codes…',
    );
    const turnOff = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-expanded': 'false' },
      'Turn off two-factor…',
    );
    newCodes.addEventListener('click', () => choose(regenerate, newCodes));
    turnOff.addEventListener('click', () => choose(form, turnOff));
    replace(
      body,
      h(
        'p',
        null,
        h('strong', null, 'Two-factor authentication is on.'),
        ' Logging in asks for a code from your app.',
      ),
      shown,
      left,
      h('div', { class: 'row' }, newCodes, turnOff),
      slot,
    );
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
    const code = totpCodeInput();
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
        const { recoveryCodes } = await post<{ recoveryCodes: string[] }>('/me/totp/enable', {
          code: code.value.trim(),
        });
        ctx.setUser({ ...ctx.user, totpEnabled: true, recoveryCodesRemaining: recoveryCodes.length });
        enabledView(recoveryCodes);
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
