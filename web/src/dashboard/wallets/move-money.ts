/** Money movement: fund (sandbox), mint, transfer and redeem from one of the caller's wallets. */

import { idempotencyKey, post } from '../../api.ts';
import { field, h, replace, shortHex, showError, showInfo, statusArea, uid } from '../../dom.ts';
import { plainCode, plainError } from '../../errors.ts';
import { AMOUNT_HINT, parseAmountInput } from '../../money.ts';
import type { Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';

type Op = 'fund' | 'mint' | 'transfer' | 'redeem';
const OPS: { op: Op; label: string; help: string }[] = [
  { op: 'fund', label: 'Fund', help: 'Sandbox faucet: test STABLE plus gas, into the wallet.' },
  { op: 'mint', label: 'Mint', help: 'Wrap public STABLE into confidential cSTABLE (1:1).' },
  {
    op: 'transfer',
    label: 'Transfer',
    help: 'Send confidential cSTABLE to an address; the amount stays sealed.',
  },
  { op: 'redeem', label: 'Redeem', help: 'Unwrap confidential cSTABLE back into public STABLE.' },
];

/** `queued` runs once the operation is queued (the view shows it in the activity list). */
export function moveMoneyForm(ctx: Ctx, queued: () => Promise<void>): HTMLElement {
  if (ctx.wallets.length === 0) return h('p', { class: 'empty' }, 'Create a wallet first.');
  const status = statusArea();
  const ops = OPS.filter((o) => o.op !== 'fund' || ctx.network?.environment !== 'production');
  const radios = ops.map((o, i) =>
    h('input', { type: 'radio', name: 'op', value: o.op, id: uid('op'), checked: i === 0 }),
  );
  const helpText = h('p', { class: 'hint', id: uid('op-help') });
  const wallet = h(
    'select',
    null,
    ctx.wallets.map((w) =>
      h('option', { value: w.id, selected: w.isPrimary }, `${w.label} (${shortHex(w.address, 4)})`),
    ),
  );
  const amount = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: false });
  const amountField = field('Amount', amount, AMOUNT_HINT);
  const listId = uid('own-addresses');
  const to = h('input', {
    type: 'text',
    list: listId,
    spellcheck: false,
    autocomplete: 'off',
    pattern: '0x[0-9a-fA-F]{40}',
    placeholder: '0x…',
  });
  const toField = field('Recipient address', to, 'Any 0x address; your own wallets are suggested.');
  toField.append(
    h(
      'datalist',
      { id: listId },
      ctx.wallets.map((w) => h('option', { value: w.address }, w.label)),
    ),
  );
  const submit = h('button', { type: 'submit' }, 'Fund');
  const selected = (): Op => (radios.find((r) => r.checked)?.value as Op) ?? 'fund';
  const sync = () => {
    const op = selected();
    const meta = OPS.find((o) => o.op === op);
    helpText.textContent = meta?.help ?? '';
    submit.textContent = meta?.label ?? 'Send';
    toField.hidden = op !== 'transfer';
    to.required = op === 'transfer';
    amount.required = op !== 'fund';
    amount.placeholder = op === 'fund' ? 'default faucet amount' : '';
  };
  for (const radio of radios) radio.addEventListener('change', sync);
  sync();
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Move money', novalidate: true },
    h(
      'fieldset',
      { 'aria-describedby': helpText.id },
      h('legend', null, 'Operation'),
      h(
        'div',
        { class: 'choices-row' },
        ops.map((o, i) =>
          h('div', { class: 'choice' }, radios[i] ?? null, h('label', { for: radios[i]?.id ?? '' }, o.label)),
        ),
      ),
      helpText,
    ),
    field('Wallet', wallet),
    amountField,
    toField,
    submit,
    status,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    replace(status);
    const op = selected();
    const body: Record<string, string> = { walletId: wallet.value };
    if (amount.value.trim() || op !== 'fund') {
      const parsed = parseAmountInput(amount.value);
      if (!parsed) {
        showError(status, `The amount is not valid. ${AMOUNT_HINT}`);
        amount.focus();
        return;
      }
      body.amount = parsed;
    }
    if (op === 'transfer') {
      if (!/^0x[0-9a-fA-F]{40}$/.test(to.value.trim())) {
        showError(status, plainCode('invalid_recipient'));
        to.focus();
        return;
      }
      body.to = to.value.trim();
    }
    submit.disabled = true;
    try {
      const { transaction } = await post<{ transaction: Transaction }>(`/${op}`, body, {
        headers: idempotencyKey(),
      });
      showInfo(
        status,
        `${OPS.find((o) => o.op === op)?.label} of ${transaction.amount} ${transaction.token} queued. Follow it under Activity.`,
      );
      amount.value = '';
      await queued();
    } catch (error) {
      showError(status, plainError(error));
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
