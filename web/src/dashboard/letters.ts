/** Letters of value: create (escrow), list with status, PDF, claim code and QR, mail, void, tracking. */

import { ApiError, apiBlob, get, post, query } from '../api.ts';
import {
  copyButton,
  field,
  formatDate,
  formatTime,
  h,
  onSubmit,
  replace,
  saveFile,
  shortHex,
  showError,
  showInfo,
  statusArea,
  statusBadge,
  txLink,
  uid,
} from '../dom.ts';
import { plainError } from '../errors.ts';
import { AMOUNT_HINT, formatAmount, parseAmountInput } from '../money.ts';
import { longWait } from '../progress.ts';
import { qrCanvas } from '../qr.ts';
import type { Leg, Letter, LetterStatus, Page } from '../types.ts';
import { type Ctx, walletName } from './context.ts';

const PAGE_SIZE = 20;
const POLL_MS = 10_000;

const STATUS_WORDS: Record<LetterStatus, string> = {
  DRAFT: 'Escrow in progress',
  ESCROWED: 'Ready: escrowed, not yet mailed',
  MAILED: 'Mailed',
  CLAIMING: 'Being claimed',
  CLAIMED: 'Claimed',
  EXPIRED: 'Expired (refunded)',
  VOIDED: 'Voided (refunded)',
  FAILED: 'Failed',
};

export async function lettersView(ctx: Ctx): Promise<HTMLElement> {
  await ctx.reloadWallets().catch(() => {});
  let page = 1;
  let letters: Page<Letter> = { items: [], page: 1, pageSize: PAGE_SIZE, total: 0 };
  const cards = new Map<string, { json: string; element: HTMLElement }>();
  const list = h('div', { class: 'letter-list' });
  const listStatus = statusArea();

  // ---------------------------------------------------------------------------------------------- create
  function createForm(): HTMLElement {
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
      field(
        'Expires after (days)',
        expires,
        'From 1 to 365 days; unclaimed letters are refunded after this.',
      ),
      submit,
      status,
      result,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
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
      submit.disabled = true;
      const wait = longWait('Escrowing the amount in the vault…');
      status.after(wait.element);
      try {
        const { letter } = await post<{ letter: Letter }>('/transfer/letter', body);
        wait.stop();
        form.reset();
        country.value = 'US';
        expires.value = '90';
        replace(result, createdPanel(letter));
        showInfo(status, `Letter for ${letter.recipient.name} created and escrowed.`);
        page = 1;
        await refresh();
      } catch (error) {
        wait.stop();
        if (error instanceof ApiError && error.code === 'escrow_unsettled') {
          showInfo(status, plainError(error));
          await refresh().catch(() => {});
        } else {
          showError(status, plainError(error));
        }
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  function createdPanel(letter: Letter): HTMLElement {
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
      codeBlock(letter),
      h('div', { class: 'actions' }, pdfButton(letter)),
    );
    window.setTimeout(() => panel.focus(), 0);
    return panel;
  }

  function codeBlock(letter: Letter): HTMLElement {
    if (!letter.claimCode || !letter.claimUrl)
      return h('p', { class: 'muted' }, 'No claim code (the letter is claimed).');
    return h(
      'div',
      { class: 'code-block' },
      qrCanvas(letter.claimUrl, `QR code of the claim link for ${letter.recipient.name}`),
      h(
        'dl',
        null,
        h('dt', null, 'Claim code'),
        h(
          'dd',
          null,
          h('code', { class: 'claim-code' }, letter.claimCode),
          ' ',
          copyButton(letter.claimCode, 'Copy code'),
        ),
        h('dt', null, 'Claim link'),
        h(
          'dd',
          null,
          h('a', { href: letter.claimUrl, class: 'claim-url', rel: 'noreferrer' }, letter.claimUrl),
          ' ',
          copyButton(letter.claimUrl, 'Copy link'),
        ),
      ),
    );
  }

  function pdfButton(letter: Letter): HTMLButtonElement {
    const button = h('button', { type: 'button', class: 'secondary' }, 'Download PDF');
    button.setAttribute('aria-label', `Download the PDF of the letter for ${letter.recipient.name}`);
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const blob = await apiBlob(`/transfer/letter/${letter.id}/pdf`, 'application/pdf');
        saveFile(`letter-${letter.id}.pdf`, blob);
      } catch (error) {
        showError(listStatus, plainError(error));
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  // ---------------------------------------------------------------------------------------------- one letter
  function legLine(name: string, leg: Leg | null): HTMLElement | null {
    if (!leg) return null;
    return h(
      'li',
      null,
      `${name}: `,
      statusBadge(leg.status),
      leg.verified ? ' verified' : '',
      ' ',
      txLink(leg.txHash, leg.explorerUrl, '(not sent yet)'),
    );
  }

  function mailControls(letter: Letter, status: HTMLElement): HTMLElement | null {
    if (letter.status !== 'ESCROWED') return null;
    const method = h(
      'select',
      null,
      h('option', { value: 'standard' }, 'Standard (first-class)'),
      h('option', { value: 'tracked' }, 'Tracked (certified or registered, with tracking)'),
    );
    const submit = h('button', { type: 'submit', class: 'secondary' }, 'Mail it');
    const form = h(
      'form',
      { class: 'inline-form', 'aria-label': `Mail the letter for ${letter.recipient.name}` },
      field('Delivery', method),
      submit,
    );
    onSubmit(form, submit, status, async () => {
      const data = await post<{ letter: Letter }>(`/transfer/letter/${letter.id}/mail`, {
        deliveryMethod: method.value,
      });
      showInfo(
        listStatus,
        `Letter for ${letter.recipient.name} sent to the printer (${data.letter.mail?.deliveryMethod ?? method.value}).`,
      );
      await refresh();
      focusCard(letter.id);
    });
    return form;
  }

  function voidControls(letter: Letter, status: HTMLElement): HTMLElement | null {
    if (letter.status !== 'ESCROWED' && letter.status !== 'MAILED') return null;
    const slot = h('div', { class: 'void' });
    const start = h('button', { type: 'button', class: 'danger' }, 'Void…');
    start.setAttribute('aria-label', `Void the letter for ${letter.recipient.name}`);
    const reset = () => replace(slot, start);
    start.addEventListener('click', () => {
      const mailed = letter.status === 'MAILED';
      const ack = h('input', { type: 'checkbox', id: uid('ack') });
      const confirm = h('button', { type: 'submit', class: 'danger' }, 'Void and refund');
      const cancel = h('button', { type: 'button', class: 'secondary' }, 'Keep the letter');
      cancel.addEventListener('click', () => {
        reset();
        start.focus();
      });
      const form = h(
        'form',
        { class: 'confirm', 'aria-label': 'Confirm void' },
        h(
          'p',
          null,
          'Voiding refunds the escrowed amount to your sending wallet. The claim code stops working.',
        ),
        mailed
          ? h(
              'div',
              { class: 'choice' },
              ack,
              h(
                'label',
                { for: ack.id },
                'I understand this letter was already mailed: the paper letter will stop working.',
              ),
            )
          : null,
        h('div', { class: 'actions' }, confirm, cancel),
      );
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        if (mailed && !ack.checked) {
          showError(status, 'Tick the box to confirm that the mailed letter will stop working.');
          ack.focus();
          return;
        }
        confirm.disabled = true;
        try {
          await post(`/transfer/letter/${letter.id}/void`, mailed ? { acknowledgeMailed: true } : {});
          showInfo(
            listStatus,
            `Letter for ${letter.recipient.name} voided; the refund is on its way to your wallet.`,
          );
          await refresh();
          focusCard(letter.id);
        } catch (error) {
          showError(status, plainError(error));
          confirm.disabled = false;
        }
      });
      replace(slot, form);
      (mailed ? ack : confirm).focus();
    });
    reset();
    return slot;
  }

  function letterCard(letter: Letter): HTMLElement {
    const headingId = uid('letter');
    const status = statusArea();
    const address = letter.recipient.address;
    const mail = letter.mail;
    const claimed = letter.status === 'CLAIMED';
    return h(
      'article',
      {
        class: 'card letter',
        'aria-labelledby': headingId,
        'data-letter-id': letter.id,
        'data-status': letter.status,
      },
      h(
        'div',
        { class: 'section-head' },
        h('h3', { id: headingId, tabindex: -1 }, `To ${letter.recipient.name}`),
        h('span', { class: `badge badge-${letter.status.toLowerCase()}` }, STATUS_WORDS[letter.status]),
      ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Amount'),
        h('dd', null, claimed ? `${formatAmount(letter.amount)} ${letter.token}` : 'sealed'),
        h('dt', null, 'From'),
        h('dd', null, walletName(ctx, letter.sender.walletId)),
        h('dt', null, 'Address'),
        h(
          'dd',
          null,
          [address.line1, address.line2, address.city, address.region, address.postal, address.countryName]
            .filter(Boolean)
            .join(', '),
        ),
        h('dt', null, 'Created'),
        h('dd', null, formatTime(letter.createdAt)),
        h('dt', null, 'Expires'),
        h('dd', null, formatDate(letter.expiresAt)),
        claimed && letter.claim
          ? [
              h('dt', null, 'Claimed'),
              h(
                'dd',
                null,
                `${formatTime(letter.claim.claimedAt)} into ${shortHex(letter.claim.walletAddress, 4)}`,
              ),
            ]
          : null,
        mail
          ? [
              h('dt', null, 'Mail'),
              h(
                'dd',
                { class: 'mail' },
                `${mail.deliveryMethod === 'tracked' ? 'Tracked' : 'Standard'} · ${mail.status}`,
                mail.trackingNumber ? [' · tracking ', h('code', null, mail.trackingNumber)] : null,
                mail.expectedDeliveryDate ? ` · expected ${formatDate(mail.expectedDeliveryDate)}` : null,
                ` · mailed ${formatTime(mail.mailedAt)}`,
                mail.testMode ? ' · test mode (not actually printed)' : null,
              ),
            ]
          : null,
        letter.error ? [h('dt', null, 'Problem'), h('dd', { class: 'error' }, letter.error)] : null,
      ),
      letter.claimCode && (letter.status === 'ESCROWED' || letter.status === 'MAILED')
        ? h('details', null, h('summary', null, 'Claim code, link and QR'), codeBlock(letter))
        : null,
      h(
        'details',
        null,
        h('summary', null, 'On-chain legs'),
        h(
          'ul',
          { class: 'legs' },
          legLine('Escrow', letter.escrow),
          legLine('Claim', letter.claim),
          legLine('Refund', letter.refund),
        ),
      ),
      h(
        'div',
        { class: 'actions' },
        pdfButton(letter),
        mailControls(letter, status),
        voidControls(letter, status),
      ),
      status,
    );
  }

  // ---------------------------------------------------------------------------------------------- list
  /** After an action rebuilt a card, keep keyboard focus on it (its heading). */
  function focusCard(id: string): void {
    list.querySelector<HTMLElement>(`article[data-letter-id="${CSS.escape(id)}"] h3`)?.focus();
  }

  function renderList(): void {
    if (letters.items.length === 0) {
      replace(list, h('p', { class: 'empty' }, 'No letters yet.'));
      return;
    }
    const pages = Math.max(1, Math.ceil(letters.total / PAGE_SIZE));
    const prev = h('button', { type: 'button', class: 'secondary small', disabled: page <= 1 }, 'Newer');
    const next = h('button', { type: 'button', class: 'secondary small', disabled: page >= pages }, 'Older');
    prev.addEventListener('click', () => {
      page -= 1;
      void refresh();
    });
    next.addEventListener('click', () => {
      page += 1;
      void refresh();
    });
    const seen = new Set<string>();
    const elements = letters.items.map((letter) => {
      seen.add(letter.id);
      const json = JSON.stringify(letter);
      const cached = cards.get(letter.id);
      if (cached && cached.json === json) return cached.element;
      const element = letterCard(letter);
      cards.set(letter.id, { json, element });
      return element;
    });
    for (const id of cards.keys()) if (!seen.has(id)) cards.delete(id);
    // Move the cards in place rather than rebuilding: unchanged cards keep open details and focus.
    const pager = h('div', { class: 'pager' }, prev, h('span', null, `Page ${page} of ${pages}`), next);
    const focused = document.activeElement;
    list.replaceChildren(...elements, pager);
    if (focused instanceof HTMLElement && list.contains(focused)) focused.focus();
  }

  async function refresh(): Promise<void> {
    letters = await get<Page<Letter>>(`/transfer/letter${query({ page, pageSize: PAGE_SIZE })}`);
    renderList();
  }

  try {
    await refresh();
  } catch (error) {
    showError(listStatus, plainError(error));
  }
  ctx.every(POLL_MS, async () => {
    try {
      await refresh();
    } catch (error) {
      showError(listStatus, plainError(error));
    }
  });

  const createHeading = uid('h');
  const listHeading = uid('h');
  return h(
    'div',
    { class: 'view' },
    h('h1', { tabindex: -1 }, 'Letters of value'),
    h(
      'p',
      { class: 'lead' },
      'Escrow an amount in the vault, then print and mail the letter or hand over its code. The recipient claims it into their own wallet; the amount and memo stay sealed until then.',
    ),
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': createHeading },
        h('h2', { id: createHeading }, 'New letter'),
        createForm(),
      ),
      h(
        'section',
        { 'aria-labelledby': listHeading, class: 'list-section' },
        h('h2', { id: listHeading }, 'Your letters'),
        listStatus,
        list,
      ),
    ),
  );
}
