/** TOTP recovery codes: shown once (copy, download) at enrollment and on regeneration; how many are left. */

import { post } from '../../api.ts';
import { copyButton, field, h, onSubmit, saveFile, showInfo, statusArea } from '../../dom.ts';
import type { Ctx } from '../context.ts';

/** The codes, once: a list, a copy button and a download, with the words on what they are for. */
export function recoveryCodesPanel(codes: string[], email: string): HTMLElement {
  const text = `sealpay recovery codes for ${email}\nEach code logs in once in place of an authenticator code.\n\n${codes.join('\n')}\n`;
  const download = h('button', { type: 'button', class: 'secondary small' }, 'Download codes');
  download.addEventListener('click', () =>
    saveFile('sealpay-recovery-codes.txt', new Blob([text], { type: 'text/plain' })),
  );
  return h(
    'div',
    { class: 'stack', role: 'region', 'aria-label': 'Recovery codes' },
    h(
      'p',
      null,
      h('strong', null, 'Save these recovery codes now: they are shown only once.'),
      ' If you lose your phone, each logs you in once in place of a code.',
    ),
    h(
      'ul',
      { class: 'recovery-codes' },
      codes.map((code) => h('li', null, h('code', null, code))),
    ),
    h('div', { class: 'row' }, copyButton(codes.join('\n'), 'Copy codes'), download),
  );
}

/** Regeneration (password and a code): the old codes stop working; the new ones are shown once. */
export function regenerateRecoveryCodes(ctx: Ctx, onCodes: (codes: string[]) => void): HTMLElement {
  const status = statusArea();
  const pw = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const code = h('input', { type: 'text', autocomplete: 'one-time-code', maxlength: 32, required: true });
  const submit = h('button', { type: 'submit', class: 'secondary' }, 'New recovery codes');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'New recovery codes' },
    h('p', null, 'New codes replace all the ones you have left.'),
    field('Password', pw),
    field('Current 6-digit code or a recovery code', code),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    const { recoveryCodes } = await post<{ recoveryCodes: string[] }>('/me/totp/recovery-codes', {
      password: pw.value,
      code: code.value.trim(),
    });
    ctx.setUser({ ...ctx.user, recoveryCodesRemaining: recoveryCodes.length });
    form.reset();
    showInfo(status, 'New recovery codes made; the old ones no longer work.');
    onCodes(recoveryCodes);
  });
  return h('div', { class: 'stack' }, form, status);
}
