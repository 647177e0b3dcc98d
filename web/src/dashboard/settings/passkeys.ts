/** The account's passkeys: the list, and registering one on this device. */

import { get, post } from '../../api.ts';
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
import { type CreationOptionsJSON, createPasskey, webauthnSupported } from '../../webauthn.ts';

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
