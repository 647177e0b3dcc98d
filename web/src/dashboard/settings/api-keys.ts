/** API keys: create (the key is shown once, with its scope), list and revoke. */

import { del, get, post } from '../../api.ts';
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
import type { ApiKeyRecord } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { describeScope, scopeFields } from './key-scope.ts';
import { showSecretOnce } from './shown-once.ts';

export function apiKeys(ctx: Ctx): HTMLElement {
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
                ['Name', 'Key', 'Scope', 'Created', 'Last used', 'Expires'].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
                // The revoke buttons' column: named for screen readers, blank on screen.
                h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Action')),
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
      h('td', { 'data-label': 'Scope' }, describeScope(ctx, key)),
      h('td', { 'data-label': 'Created' }, formatDate(key.createdAt)),
      h('td', { 'data-label': 'Last used' }, formatTime(key.lastUsedAt)),
      h('td', { 'data-label': 'Expires' }, key.expiresAt ? formatDate(key.expiresAt) : 'never'),
      cell,
    );
  }

  const name = h('input', { type: 'text', required: true, maxlength: 100, autocomplete: 'off' });
  const expires = h('input', { type: 'number', min: 1, max: 365, class: 'short' });
  const scope = scopeFields(ctx);
  const submit = h('button', { type: 'submit' }, 'Create key');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Create an API key' },
    field('Key name', name, 'What uses it, e.g. “billing server”.'),
    field('Expires after (days, optional)', expires, '1 to 365; leave empty for no expiry.'),
    scope.element,
    submit,
  );
  onSubmit(form, submit, status, async () => {
    const chosen = scope.read();
    if ('problem' in chosen) {
      showError(status, chosen.problem);
      chosen.focus.focus();
      return;
    }
    const days = expires.value ? Number.parseInt(expires.value, 10) : undefined;
    const data = await post<{ key: ApiKeyRecord; plaintext: string }>('/keys', {
      name: name.value.trim(),
      ...(days ? { expiresInDays: days } : {}),
      ...chosen.body,
    });
    form.reset();
    scope.reset();
    showSecretOnce(
      created,
      {
        title: `New key “${data.key.name}”`,
        value: data.plaintext,
        copyLabel: 'Copy key',
        note:
          `Send it as “Authorization: Bearer <key>”. Its scope: ${describeScope(ctx, data.key)}. ` +
          'No key can manage keys, passwords or 2FA.',
      },
      name,
    );
    await load();
  });
  void load().catch((error) => showError(status, plainError(error)));
  return section('API keys', created, form, status, list);
}
