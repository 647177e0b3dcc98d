/** The claim page's two cards: the letter's public preview, and the outcome of a claim. */

import { formatDate, formatTime, h, shortHex, statusBadge, txLink, uid } from '../dom.ts';
import { formatAmount } from '../money.ts';
import type { Letter, LetterPreview, Transaction, Wallet } from '../types.ts';

function statusWords(p: LetterPreview): { text: string; tone: string } {
  switch (p.status) {
    case 'ESCROWED':
    case 'MAILED':
      return { text: 'Ready to claim', tone: 'ok' };
    case 'CLAIMING':
      return { text: 'Being claimed right now', tone: 'wait' };
    case 'CLAIMED':
      return { text: 'Claimed', tone: 'done' };
    case 'EXPIRED':
      return { text: 'Expired: the amount went back to the sender', tone: 'bad' };
    case 'VOIDED':
      return { text: 'Voided by the sender', tone: 'bad' };
    case 'DRAFT':
      return { text: 'Not ready yet: the sender is still escrowing it', tone: 'wait' };
    default:
      return { text: p.claimable ? 'Ready to claim' : 'Cannot be claimed', tone: p.claimable ? 'ok' : 'bad' };
  }
}

/** What follows "Amount sealed": "until you claim it" only while it can be claimed. */
function sealedWords(p: LetterPreview): string {
  if (p.claimable) return ' until you claim it';
  if (p.status === 'CLAIMED' || p.status === 'CLAIMING') return ': shown only to the person who claimed it';
  if (p.status === 'VOIDED' || p.status === 'EXPIRED') return ': it goes back to the sender, not to a claim';
  return '';
}

/** The public preview of a letter: who sent it to whom, whether it can be claimed, the amount sealed. */
export function previewCard(p: LetterPreview, groupedCode: string): HTMLElement {
  const words = statusWords(p);
  const headingId = uid('h');
  return h(
    'section',
    { class: 'card letter-preview', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, `A letter of value for ${p.recipientName}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'From'),
      h('dd', { class: 'sender' }, p.senderLabel),
      h('dt', null, 'For'),
      h('dd', { class: 'recipient' }, p.recipientName),
      h('dt', null, 'Status'),
      h('dd', null, h('span', { class: `badge tone-${words.tone}`, 'data-status': p.status }, words.text)),
      h('dt', null, 'Amount'),
      h(
        'dd',
        null,
        h('span', { class: 'sealed' }, 'Amount sealed'),
        h('span', { class: 'muted' }, sealedWords(p)),
      ),
      // A deadline only while it can still be met: not for a letter claimed, voided or expired.
      p.claimable ? [h('dt', null, 'Claim by'), h('dd', null, formatDate(p.expiresAt))] : null,
      p.status === 'EXPIRED' ? [h('dt', null, 'Expired on'), h('dd', null, formatDate(p.expiresAt))] : null,
      h('dt', null, 'Code'),
      h('dd', null, h('code', null, groupedCode)),
    ),
  );
}

/**
 * A claim's outcome: the revealed amount and memo once CLAIMED, where the money went, and the claim transaction.
 * `again`: the claimant opened a letter they claimed before ("You claimed this on … into …").
 */
export function resultCard(
  letter: Letter,
  transaction: Transaction,
  wallet: Pick<Wallet, 'label' | 'address'> | null,
  again: boolean,
): HTMLElement {
  const headingId = uid('h');
  const claimed = letter.status === 'CLAIMED';
  const memo = claimed && letter.memo ? letter.memo : null;
  const address = letter.claim?.walletAddress || wallet?.address || transaction.toAddress;
  const into = wallet ? `${wallet.label} (${shortHex(address, 4)})` : shortHex(address, 4);
  const when = letter.claim?.claimedAt ?? transaction.createdAt;
  return h(
    'section',
    { class: 'card result', 'aria-labelledby': headingId, tabindex: -1 },
    h(
      'h2',
      { id: headingId },
      !claimed ? 'Claim in progress' : again ? 'You claimed this letter' : 'Claimed!',
    ),
    h('p', { class: 'claimed-into' }, `You claimed this on ${formatTime(when)} into ${into}.`),
    claimed
      ? h(
          'p',
          { class: 'big-amount' },
          'You received ',
          h('strong', { class: 'revealed-amount' }, `${formatAmount(letter.amount)} ${letter.token}`),
        )
      : h(
          'p',
          null,
          transaction.status === 'CONFIRMED'
            ? 'The payout is on the chain, into this wallet; our records are catching up. This page updates by itself.'
            : 'The payout is still being confirmed on-chain. This page updates by itself.',
        ),
    memo
      ? h(
          'figure',
          { class: 'memo' },
          h('figcaption', null, 'Message from the sender'),
          h('blockquote', null, memo),
        )
      : null,
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Status'),
      h('dd', { class: 'tx-status' }, statusBadge(transaction.status)),
      h('dt', null, 'Chain hash'),
      h('dd', null, txLink(transaction.txHash, transaction.explorerUrl, 'not sent yet')),
      h('dt', null, 'Into'),
      h(
        'dd',
        { class: 'into-address' },
        wallet ? `${wallet.label} ` : null,
        h('code', { class: 'hash' }, address),
      ),
      h('dt', null, 'Reference'),
      h('dd', null, h('code', null, transaction.id)),
    ),
    h(
      'p',
      { class: 'actions' },
      h(
        'a',
        { href: `/#/transaction/${encodeURIComponent(transaction.id)}`, class: 'button-link' },
        'Transaction and receipt',
      ),
      h('a', { href: '/#/wallets', class: 'button-link secondary' }, 'Go to your wallets'),
    ),
  );
}
