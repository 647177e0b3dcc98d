/**
 * An API key's scope (what it may do, which wallets, how much in any 24 hours): the fields of the create form and the words
 * of the list.
 */

import { field, h, uid } from '../../dom.ts';
import { AMOUNT_HINT, formatAmount, parseAmountInput } from '../../money.ts';
import type { ApiKeyRecord } from '../../types.ts';
import { type Ctx, walletName } from '../context.ts';

/** The scope part of `POST /keys`. */
export interface ScopeBody {
  permissions?: 'read_only';
  walletIds?: string[];
  spendLimit?: { amount: string; period: '24h' };
}

export interface ScopeFields {
  element: HTMLElement;
  /** The chosen scope, or the sentence that says what to fix (with the control to focus). */
  read(): { body: ScopeBody } | { problem: string; focus: HTMLElement };
  reset(): void;
}

function radio(name: string, label: string, checked = false) {
  const input = h('input', { type: 'radio', name, id: uid('ks'), checked });
  return { input, element: h('div', { class: 'choice' }, input, h('label', { for: input.id }, label)) };
}

export function scopeFields(ctx: Ctx): ScopeFields {
  const group = uid('scope');
  const full = radio(`${group}-permissions`, 'Full: read, and move money', true);
  const readOnly = radio(`${group}-permissions`, 'Read-only: read everything, change nothing');
  const allWallets = radio(`${group}-wallets`, 'Every wallet, also those added later', true);
  const someWallets = radio(`${group}-wallets`, 'Only the wallets ticked below');
  const ticks = ctx.wallets.map((wallet) => {
    const input = h('input', { type: 'checkbox', id: uid('kw'), value: wallet.id });
    return {
      input,
      element: h('div', { class: 'choice' }, input, h('label', { for: input.id }, wallet.label)),
    };
  });
  const limit = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', class: 'short' });
  const limitField = field(
    'Spend limit per 24 hours (cSTABLE, optional)',
    limit,
    `What the key may send by transfers and letters in any 24 hours; empty for no limit. ${AMOUNT_HINT}`,
  );
  const sync = () => {
    for (const tick of ticks) tick.input.disabled = !someWallets.input.checked;
    limit.disabled = readOnly.input.checked;
    if (limit.disabled) limit.value = '';
  };
  for (const control of [full, readOnly, allWallets, someWallets])
    control.input.addEventListener('change', sync);
  sync();
  const element = h(
    'div',
    { class: 'stack' },
    h('fieldset', null, h('legend', null, 'What the key may do'), full.element, readOnly.element),
    h(
      'fieldset',
      null,
      h('legend', null, 'Wallets it sees and acts on'),
      allWallets.element,
      someWallets.element,
      ticks.length > 0
        ? h('div', { class: 'choices-row' }, ...ticks.map((tick) => tick.element))
        : h('p', { class: 'hint' }, 'No wallets yet.'),
    ),
    limitField,
  );
  return {
    element,
    read() {
      const body: ScopeBody = {};
      if (readOnly.input.checked) body.permissions = 'read_only';
      if (someWallets.input.checked) {
        const chosen = ticks.filter((tick) => tick.input.checked).map((tick) => tick.input.value);
        if (chosen.length === 0) {
          return { problem: 'Tick at least one wallet, or choose every wallet.', focus: someWallets.input };
        }
        body.walletIds = chosen;
      }
      if (limit.value.trim()) {
        const amount = parseAmountInput(limit.value);
        if (!amount) return { problem: `The spend limit: ${AMOUNT_HINT}`, focus: limit };
        body.spendLimit = { amount, period: '24h' };
      }
      return { body };
    },
    reset() {
      full.input.checked = true;
      allWallets.input.checked = true;
      for (const tick of ticks) tick.input.checked = false;
      limit.value = '';
      sync();
    },
  };
}

/** The key's scope in words, for the list: what it may do, its wallets, its limit and what it used of it. */
export function describeScope(ctx: Ctx, key: ApiKeyRecord): string {
  const may = key.permissions === 'read_only' ? 'Read-only' : 'Full';
  const wallets = key.walletIds ? key.walletIds.map((id) => walletName(ctx, id)).join(', ') : 'every wallet';
  const limit = key.spendLimit
    ? `; ${formatAmount(key.spendLimit.amount)} per 24 hours, ${formatAmount(key.spentLast24h ?? '0')} used`
    : '';
  return `${may}, ${wallets}${limit}`;
}
