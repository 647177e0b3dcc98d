/** A letter's card in the sender's list. */

import { ApiError, post } from '../../api.ts';
import {
  enableAgain,
  field,
  formatDate,
  formatTime,
  h,
  onSubmit,
  replace,
  shortHex,
  showError,
  showInfo,
  statusArea,
  statusBadge,
  txLink,
  uid,
} from '../../dom.ts';
import { plainError } from '../../errors.ts';
import { formatAmount } from '../../money.ts';
import type { Leg, Letter, LetterStatus } from '../../types.ts';
import { type Ctx, walletName } from '../context.ts';
import { mailingBlocker, noteProviderMissing } from './mailing.ts';
import { codeBlock, type LettersList, pdfButton } from './parts.ts';

const STATUS_WORDS: Record<LetterStatus, string> = {
  DRAFT: 'Escrow in progress',
  ESCROWED: 'Ready: escrowed, not yet mailed',
  MAILED: 'Mailed',
  CLAIMING: 'Being claimed',
  CLAIMED: 'Claimed',
  EXPIRED: 'Expired',
  VOIDED: 'Voided',
  FAILED: 'Failed',
};

/**
 * The print provider's status of a mailed letter in plain words (`created` is the provider's word for "accepted,
 * not yet in the mail stream"). A status not listed here is shown with its underscores as spaces.
 */
const MAIL_STATUS_WORDS: Record<string, string> = {
  created: 'accepted by the printer, not yet posted',
  mailed: 'posted',
  in_transit: 'in the post',
  in_local_area: 'at the local post office',
  processed_for_delivery: 'out for delivery',
  re_routed: 'redirected by the post',
  returned_to_sender: 'returned to you',
  delivered: 'delivered',
  cancelled: 'cancelled before posting',
};

export function mailStatusWords(status: string): string {
  return MAIL_STATUS_WORDS[status] ?? status.replace(/_/g, ' ');
}

/** Statuses whose claim code still works: only these letters have a code, a link and a PDF worth handing over. */
const LIVE: ReadonlySet<LetterStatus> = new Set(['ESCROWED', 'MAILED']);

/** "Voided (refunded)" only once the refund leg is confirmed on chain; until then, what is still happening. */
export function statusWords(letter: Letter): string {
  const words = STATUS_WORDS[letter.status];
  if (letter.status !== 'VOIDED' && letter.status !== 'EXPIRED') return words;
  const refund = letter.refund?.status;
  if (refund === 'CONFIRMED' || refund === 'SETTLED') return `${words} (refunded)`;
  if (refund === 'FAILED') return `${words} (refund failed)`;
  return `${words} (refund on its way)`;
}

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

/** The address as one line, the way the letter card and the mail confirmation show it. */
function addressLine(letter: Letter): string {
  const address = letter.recipient.address;
  return [address.line1, address.line2, address.city, address.region, address.postal, address.countryName]
    .filter(Boolean)
    .join(', ');
}

/**
 * A start button that gives way, in its place, to a confirmation form; the form's cancel button (`cancelLabel`), or
 * Escape, puts the start button back, focused. `open` builds the form around that cancel button and names what takes focus.
 */
function confirmStep(
  slotClass: string,
  start: HTMLButtonElement,
  cancelLabel: string,
  open: (cancel: HTMLButtonElement) => { form: HTMLFormElement; focus: HTMLElement },
): HTMLElement {
  const slot = h('div', { class: slotClass });
  start.addEventListener('click', () => {
    const cancel = h('button', { type: 'button', class: 'secondary' }, cancelLabel);
    cancel.addEventListener('click', () => {
      replace(slot, start);
      start.focus();
    });
    const { form, focus } = open(cancel);
    // Escape closes it as its cancel button does (it is a dialog in all but name).
    form.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      cancel.click();
    });
    replace(slot, form);
    focus.focus();
  });
  replace(slot, start);
  return slot;
}

/**
 * "Mail it…" opens a confirmation (where, how, what it costs) before anything is sent: a mailed letter cannot be
 * called back. The interface quotes no postage, so the confirmation says who charges it instead of inventing a price.
 */
function mailControls(list: LettersList, letter: Letter, status: HTMLElement): HTMLElement | null {
  if (letter.status !== 'ESCROWED') return null;
  const blocker = mailingBlocker(letter);
  if (blocker) return h('p', { class: 'mail-unavailable' }, blocker);
  const start = h('button', { type: 'button', class: 'secondary' }, 'Mail it…');
  start.setAttribute('aria-label', `Mail it: the letter for ${letter.recipient.name}`);
  return confirmStep('mail-controls', start, 'Not now', (cancel) => {
    const method = h(
      'select',
      null,
      h('option', { value: 'standard' }, 'Standard (first-class)'),
      h('option', { value: 'tracked' }, 'Tracked (certified or registered, with tracking)'),
    );
    const confirm = h('button', { type: 'submit' }, 'Send to the printer');
    const form = h(
      'form',
      {
        class: 'confirm confirm-neutral',
        'aria-label': `Confirm mailing the letter for ${letter.recipient.name}`,
      },
      h('p', null, `The letter is printed and posted to ${letter.recipient.name}, ${addressLine(letter)}.`),
      field('Delivery', method),
      h(
        'p',
        { class: 'postage' },
        'Postage: charged by the print provider to the account this service mails with, at that provider’s ' +
          'rates (tracked costs more than standard); sealpay does not quote a price. In test mode nothing is ' +
          'printed, posted or charged, and the card says so.',
      ),
      h(
        'p',
        null,
        'A posted letter cannot be called back: voiding it later refunds you and stops its code, but the paper ' +
          'still arrives.',
      ),
      h('div', { class: 'actions' }, confirm, cancel),
    );
    onSubmit(form, confirm, status, async () => {
      let data: { letter: Letter };
      try {
        data = await post<{ letter: Letter }>(`/transfer/letter/${letter.id}/mail`, {
          deliveryMethod: method.value,
        });
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'mail_provider_not_configured')) throw error;
        // Not this letter's fault: no letter can be mailed here. Every card now says why instead of offering it,
        // and keyboard focus stays on this letter's card.
        noteProviderMissing();
        await list.rebuild();
        await list.changed(letter.id);
        return;
      }
      showInfo(
        list.status,
        `Letter for ${letter.recipient.name} sent to the printer (${data.letter.mail?.deliveryMethod ?? method.value}).`,
      );
      await list.changed(letter.id);
    });
    return { form, focus: method };
  });
}

function voidControls(list: LettersList, letter: Letter, status: HTMLElement): HTMLElement | null {
  if (letter.status !== 'ESCROWED' && letter.status !== 'MAILED') return null;
  const start = h('button', { type: 'button', class: 'danger' }, 'Void…');
  start.setAttribute('aria-label', `Void the letter for ${letter.recipient.name}`);
  return confirmStep('void', start, 'Keep the letter', (cancel) => {
    const mailed = letter.status === 'MAILED';
    const ack = h('input', { type: 'checkbox', id: uid('ack') });
    const confirm = h('button', { type: 'submit', class: 'danger' }, 'Void and refund');
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
          list.status,
          `Letter for ${letter.recipient.name} voided; the refund is on its way to your wallet.`,
        );
        await list.changed(letter.id);
      } catch (error) {
        showError(status, plainError(error));
        enableAgain(confirm);
      }
    });
    return { form, focus: mailed ? ack : confirm };
  });
}

/** One letter: its facts, mail tracking, code and legs, and what its sender can do with it (PDF, mail, void). */
export function letterCard(ctx: Ctx, list: LettersList, letter: Letter): HTMLElement {
  const headingId = uid('letter');
  const status = statusArea();
  const mail = letter.mail;
  const claimed = letter.status === 'CLAIMED';
  const live = LIVE.has(letter.status);
  // The API keeps amount and memo sealed until the claim, for the sender too; the amount is the sender's own
  // escrow transaction's, read from it (as the supplement allows). The memo stays sealed until claimed.
  const amount = claimed ? letter.amount : list.escrowAmount(letter);
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
      h('span', { class: `badge badge-${letter.status.toLowerCase()}` }, statusWords(letter)),
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Amount'),
      h('dd', { class: 'letter-amount' }, amount ? `${formatAmount(amount)} ${letter.token}` : '…'),
      h('dt', null, 'Memo'),
      claimed
        ? h('dd', { class: 'letter-memo' }, letter.memo || '(none)')
        : h(
            'dd',
            { class: 'letter-memo sealed' },
            'Sealed until claimed: the service keeps it sealed, for you too, and never prints it.',
          ),
      h('dt', null, 'From'),
      h('dd', null, walletName(ctx, letter.sender.walletId)),
      h('dt', null, 'Address'),
      h('dd', null, addressLine(letter)),
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
              `${mail.deliveryMethod === 'tracked' ? 'Tracked' : 'Standard'} · ${mailStatusWords(mail.status)}`,
              mail.trackingNumber ? [' · tracking ', h('code', null, mail.trackingNumber)] : null,
              // A cancelled mailing is expected nowhere.
              mail.expectedDeliveryDate && mail.status !== 'cancelled'
                ? ` · expected ${formatDate(mail.expectedDeliveryDate)}`
                : null,
              ` · mailed ${formatTime(mail.mailedAt)}`,
              mail.testMode ? ' · test mode (not actually printed)' : null,
            ),
          ]
        : null,
      letter.error ? [h('dt', null, 'Problem'), h('dd', { class: 'error' }, letter.error)] : null,
    ),
    letter.claimCode && live
      ? list.details(letter.id, 'code', h('summary', null, 'Claim code, link and QR'), codeBlock(letter))
      : null,
    list.details(
      letter.id,
      'legs',
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
      live ? pdfButton(letter, list.status) : null,
      mailControls(list, letter, status),
      voidControls(list, letter, status),
    ),
    status,
  );
}
