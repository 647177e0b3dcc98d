/** Creating a letter of value: the form, and the panel with the new letter's code. */

import { ApiError, get, isServiceTrouble, newIdempotencyKey, post } from '../../api.ts';
import { enableAgain, field, h, replace, shortHex, showError, showInfo, statusArea, uid } from '../../dom.ts';
import { plainCode, plainError } from '../../errors.ts';
import { AMOUNT_HINT, formatAmount, parseAmountInput } from '../../money.ts';
import { longWait } from '../../progress.ts';
import type { Letter } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { codeBlock, type LettersList, pdfButton } from './parts.ts';

/** How often a letter answered `escrow_unsettled` is read again until its escrow is settled. */
const FOLLOW_MS = 2000;

/**
 * The new-letter form: the amount escrowed from a custodial wallet, the recipient's address, the expiry; and once
 * created, the letter's code, QR and PDF. `list` is the letters list the view shows (read again after a creation).
 *
 * Each letter asked for is one intent with one Idempotency-Key: asked again with the same details after an answer
 * that never came (or the service's trouble), the service answers the letter it made, never a second. A letter
 * answered `502 escrow_unsettled` is followed with `GET /transfer/letter/{id}` until it is escrowed, with the button
 * held meanwhile: it exists, and pressing again must not look like the way to get it.
 */
export function createForm(ctx: Ctx, list: LettersList): HTMLElement {
  const senders = ctx.wallets.filter((w) => w.type === 'CUSTODIAL');
  if (senders.length === 0) {
    return h(
      'p',
      { class: 'empty' },
      'You need a custodial wallet holding confidential cSTABLE to send a letter.',
    );
  }
  const status = statusArea();
  const result = h('div');
  const wallet = h(
    'select',
    { required: true },
    senders.map((w) =>
      h('option', { value: w.id, selected: w.isPrimary }, `${w.label} (${shortHex(w.address, 4)})`),
    ),
  );
  const amount = h('input', { type: 'text', inputmode: 'decimal', required: true, autocomplete: 'off' });
  const memo = h('textarea', { maxlength: 500, rows: 3 });
  const name = h('input', { type: 'text', required: true, maxlength: 200, autocomplete: 'off' });
  const line1 = h('input', { type: 'text', required: true, maxlength: 200, autocomplete: 'off' });
  const line2 = h('input', { type: 'text', maxlength: 200, autocomplete: 'off' });
  const city = h('input', { type: 'text', required: true, maxlength: 100, autocomplete: 'off' });
  const region = h('input', { type: 'text', required: true, maxlength: 100, autocomplete: 'off' });
  const postal = h('input', { type: 'text', maxlength: 20, autocomplete: 'off' });
  const country = h('input', {
    type: 'text',
    required: true,
    value: 'US',
    pattern: '[A-Za-z]{2}',
    maxlength: 2,
    autocomplete: 'off',
    class: 'short',
  });
  const expires = h('input', {
    type: 'number',
    min: 1,
    max: 365,
    value: '90',
    required: true,
    class: 'short',
  });
  const submit = h('button', { type: 'submit' }, 'Escrow and create letter');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Create a letter of value' },
    field('From wallet', wallet, 'The amount leaves this wallet’s confidential balance into the vault.'),
    field('Amount (cSTABLE)', amount, AMOUNT_HINT),
    field('Memo (optional)', memo, 'Up to 500 characters. Sealed until claimed; never printed.'),
    h(
      'fieldset',
      null,
      h('legend', null, 'Recipient'),
      field('Recipient name', name),
      field('Address line 1', line1),
      field('Address line 2 (optional)', line2),
      h('div', { class: 'row' }, field('City', city), field('State or region', region)),
      h(
        'div',
        { class: 'row' },
        field('Postal code (optional)', postal),
        field('Country code', country, 'Two letters, e.g. US, GB, DE.'),
      ),
    ),
    field('Expires after (days)', expires, 'From 1 to 365 days; unclaimed letters are refunded after this.'),
    submit,
    status,
    result,
  );
  /** The letter asked for whose outcome is not known yet: the same details asked again reuse its key. */
  let intent: { fingerprint: string; key: string } | null = null;
  /** The letter answered `escrow_unsettled` being followed, with what the sender typed for its panel. */
  let following: { letterId: string; amount: string; memo: string } | null = null;

  /** The letter's escrow is settled (or failed): the form is free again, for a new letter. */
  function settled(letter: Letter): void {
    const typed = following;
    following = null;
    intent = null;
    enableAgain(submit);
    if (!typed) return;
    if (letter.status === 'FAILED') {
      replace(result);
      showError(status, `${plainCode('escrow_failed')} ${letter.error ?? ''}`.trim());
      return;
    }
    form.reset();
    country.value = 'US';
    expires.value = '90';
    replace(result, createdPanel(letter, list.status, typed.amount, typed.memo));
    showInfo(status, `Letter for ${letter.recipient.name} created and escrowed.`);
    void list.showNewest().catch(() => {});
  }

  ctx.every(FOLLOW_MS, async () => {
    if (!following) return;
    const { letterId } = following;
    try {
      const { letter } = await get<{ letter: Letter }>(`/transfer/letter/${encodeURIComponent(letterId)}`);
      if (following?.letterId === letterId && letter.status !== 'DRAFT') settled(letter);
    } catch {
      // Read again at the next tick; the panel says the letter is being escrowed meanwhile.
    }
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (following) return;
    replace(status);
    replace(result);
    const parsed = parseAmountInput(amount.value);
    if (!parsed) {
      showError(status, `The amount is not valid. ${AMOUNT_HINT}`);
      amount.focus();
      return;
    }
    const days = Number.parseInt(expires.value, 10);
    const body = {
      walletId: wallet.value,
      amount: parsed,
      ...(memo.value.trim() ? { memo: memo.value.trim() } : {}),
      recipient: {
        name: name.value.trim(),
        address: {
          line1: line1.value.trim(),
          ...(line2.value.trim() ? { line2: line2.value.trim() } : {}),
          city: city.value.trim(),
          region: region.value.trim(),
          ...(postal.value.trim() ? { postal: postal.value.trim() } : {}),
          country: country.value.trim().toUpperCase(),
        },
      },
      ...(Number.isInteger(days) ? { expiresInDays: days } : {}),
    };
    const fingerprint = JSON.stringify(body);
    if (intent?.fingerprint !== fingerprint) intent = { fingerprint, key: newIdempotencyKey() };
    const { key } = intent;
    submit.disabled = true;
    const wait = longWait('Escrowing the amount in the vault…');
    status.after(wait.element);
    try {
      const { letter } = await post<{ letter: Letter }>('/transfer/letter', body, {
        headers: { 'Idempotency-Key': key },
      });
      wait.stop();
      following = { letterId: letter.id, amount: parsed, memo: body.memo ?? '' };
      settled(letter);
    } catch (error) {
      wait.stop();
      const letterId = unsettledLetter(error);
      if (letterId) {
        // The escrow was sent: the letter exists and settles by itself. Follow it; nothing to press again.
        following = { letterId, amount: parsed, memo: body.memo ?? '' };
        replace(result, settlingPanel(letterId, body.recipient.name, parsed));
        await list.refresh().catch(() => {});
        return;
      }
      // A refusal, or an escrow that failed (nothing moved), ends the intent. Without an answer, or with the
      // service's trouble, whether the letter was made is not known: the same details asked again are the same
      // letter, under the same key.
      const unknown =
        isServiceTrouble(error) && !(error instanceof ApiError && error.code === 'escrow_failed');
      if (!unknown) intent = null;
      showError(
        status,
        unknown
          ? `${plainError(error)} Pressing the button again asks for this same letter: it is never escrowed twice.`
          : plainError(error),
      );
      enableAgain(submit);
    }
  });
  return form;
}

/** The letter of an `escrow_unsettled` answer (its `details.letterId`), or null for any other outcome. */
function unsettledLetter(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.code !== 'escrow_unsettled') return null;
  const details = error.details as { letterId?: unknown } | undefined;
  return typeof details?.letterId === 'string' ? details.letterId : null;
}

/** A letter whose escrow was sent but is not settled yet: said as being escrowed, followed until it is. */
function settlingPanel(letterId: string, recipient: string, amount: string): HTMLElement {
  const headingId = uid('h');
  return h(
    'section',
    { class: 'created settling', 'aria-labelledby': headingId, 'data-letter-id': letterId },
    h('h3', { id: headingId }, 'Letter being escrowed'),
    h(
      'p',
      { role: 'status' },
      `The ${formatAmount(amount)} cSTABLE for ${recipient} is on its way to the vault and being confirmed. The letter ` +
        'is made: this page follows it and shows its code once it is ready, usually within a minute. There is ' +
        'nothing to press again.',
    ),
    h('progress', { 'aria-label': `Escrowing the letter for ${recipient}` }),
  );
}

/** The new letter's code, QR and PDF, with the amount and memo the sender just wrote (the API seals them). */
function createdPanel(letter: Letter, status: HTMLElement, amount: string, memo: string): HTMLElement {
  const headingId = uid('h');
  const panel = h(
    'section',
    { class: 'created', 'aria-labelledby': headingId, tabindex: -1 },
    h('h3', { id: headingId }, 'Letter ready'),
    h(
      'p',
      null,
      'Print the PDF and mail it, or hand the code or QR over yourself. Anyone holding the code can claim it.',
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Amount'),
      h('dd', null, `${formatAmount(amount)} ${letter.token}`),
      h('dt', null, 'Memo'),
      h('dd', null, memo || '(none)'),
    ),
    codeBlock(letter),
    h('div', { class: 'actions' }, pdfButton(letter, status)),
  );
  window.setTimeout(() => panel.focus(), 0);
  return panel;
}
