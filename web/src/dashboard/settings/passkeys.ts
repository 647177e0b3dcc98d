/** The account's passkeys: the list (last use, rename, remove), and registering one on this device. */

import { del, get, patch, post } from '../../api.ts';
import {
  field,
  formatDate,
  formatTime,
  h,
  onSubmit,
  replace,
  section,
  showError,
  showInfo,
  statusArea,
} from '../../dom.ts';
import { plainError } from '../../errors.ts';
import type { PasskeyRecord } from '../../types.ts';
import {
  type CreationOptionsJSON,
  createPasskey,
  passkeysUnavailableReason,
  webauthnSupported,
} from '../../webauthn.ts';

export function passkeys(): HTMLElement {
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
            passkeys.map((p) => passkeyRow(p)),
          ),
    );
  }
  function passkeyRow(p: PasskeyRecord): HTMLElement {
    const name = p.deviceName ?? 'Passkey';
    const row = h('li');
    const rename = h(
      'button',
      { type: 'button', class: 'secondary small', 'aria-label': `Rename passkey ${name}` },
      'Rename',
    );
    const remove = h(
      'button',
      { type: 'button', class: 'danger small', 'aria-label': `Remove passkey ${name}` },
      'Remove',
    );
    const show = () =>
      replace(
        row,
        h('strong', null, name),
        h(
          'span',
          { class: 'muted' },
          ` · added ${formatDate(p.createdAt)} · last used ${formatTime(p.lastUsedAt)} `,
        ),
        rename,
        ' ',
        remove,
      );
    rename.addEventListener('click', () => {
      const input = h('input', { type: 'text', maxlength: 100, required: true, value: name });
      const save = h('button', { type: 'submit', class: 'small' }, 'Save name');
      const cancel = h('button', { type: 'button', class: 'secondary small' }, 'Cancel');
      cancel.addEventListener('click', show);
      const form = h(
        'form',
        { class: 'row', 'aria-label': `Rename passkey ${name}` },
        field('New name', input),
        save,
        cancel,
      );
      onSubmit(form, save, status, async () => {
        await patch(`/me/passkeys/${encodeURIComponent(p.id)}`, { deviceName: input.value.trim() });
        showInfo(status, 'Passkey renamed.');
        await load();
      });
      replace(row, form);
      input.select();
    });
    remove.addEventListener('click', () => {
      const yes = h(
        'button',
        { type: 'button', class: 'danger small', 'aria-label': `Yes, remove passkey ${name}` },
        'Yes, remove',
      );
      const no = h('button', { type: 'button', class: 'secondary small' }, 'Keep it');
      no.addEventListener('click', show);
      yes.addEventListener('click', async () => {
        yes.disabled = true;
        try {
          await del(`/me/passkeys/${encodeURIComponent(p.id)}`);
          showInfo(status, `Passkey “${name}” removed: it can no longer log in.`);
          await load();
        } catch (error) {
          showError(status, plainError(error));
          yes.disabled = false;
        }
      });
      replace(row, h('span', null, `Remove “${name}”? It stops logging in at once. `), yes, ' ', no);
    });
    show();
    return row;
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
  const unavailable = passkeysUnavailableReason();
  return section(
    'Passkeys',
    h('p', null, 'Log in without a password, with your device’s screen lock or a security key.'),
    list,
    !webauthnSupported()
      ? h('p', { class: 'muted' }, 'This browser does not support passkeys.')
      : unavailable
        ? h('p', { class: 'muted passkey-unavailable' }, unavailable)
        : form,
    status,
  );
}
