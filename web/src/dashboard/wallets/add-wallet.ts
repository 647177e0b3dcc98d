/** The form that creates a custodial wallet or registers a watch-only address. */

import { post } from '../../api.ts';
import { field, h, onSubmit, showInfo, statusArea, uid } from '../../dom.ts';
import type { Wallet } from '../../types.ts';

/** `added` runs once the wallet exists (the view reloads the list and the balances). */
export function addWalletForm(added: () => Promise<void>): HTMLElement {
  const status = statusArea();
  const custodial = h('input', {
    type: 'radio',
    name: 'wallet-type',
    value: 'CUSTODIAL',
    checked: true,
    id: uid('wt'),
  });
  const external = h('input', { type: 'radio', name: 'wallet-type', value: 'EXTERNAL', id: uid('wt') });
  const label = h('input', { type: 'text', maxlength: 100, placeholder: 'e.g. Savings' });
  const address = h('input', {
    type: 'text',
    pattern: '0x[0-9a-fA-F]{40}',
    spellcheck: false,
    autocomplete: 'off',
    placeholder: '0x…',
  });
  const addressField = field('Address to watch', address, 'A 0x address you control elsewhere (watch-only).');
  addressField.hidden = true;
  const submit = h('button', { type: 'submit' }, 'Create wallet');
  const sync = () => {
    addressField.hidden = !external.checked;
    address.required = external.checked;
    submit.textContent = external.checked ? 'Add watch-only wallet' : 'Create wallet';
  };
  custodial.addEventListener('change', sync);
  external.addEventListener('change', sync);
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Add a wallet' },
    h(
      'fieldset',
      null,
      h('legend', null, 'Kind of wallet'),
      h(
        'div',
        { class: 'choice' },
        custodial,
        h('label', { for: custodial.id }, 'Custodial (sealpay holds the key)'),
      ),
      h(
        'div',
        { class: 'choice' },
        external,
        h('label', { for: external.id }, 'Watch-only (an address you own)'),
      ),
    ),
    field('Label (optional)', label),
    addressField,
    submit,
    status,
  );
  onSubmit(form, submit, status, async () => {
    const body: Record<string, string> = { type: external.checked ? 'EXTERNAL' : 'CUSTODIAL' };
    if (label.value.trim()) body.label = label.value.trim();
    if (external.checked) body.address = address.value.trim();
    const { wallet } = await post<{ wallet: Wallet }>('/wallets', body);
    await added();
    form.reset();
    sync();
    showInfo(status, `Wallet “${wallet.label}” created.`);
  });
  return form;
}
