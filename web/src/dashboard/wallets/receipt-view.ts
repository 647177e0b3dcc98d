/**
 * The receipt page at `#/receipt/{id}`: a transaction's `.nota` receipt rendered for people, its signature checked
 * in this browser against the service's published key ("Verified" or "Not verified", plainly), printable or
 * savable as PDF (the print stylesheet keeps only the receipt), and the `.nota` file still downloadable for
 * machines. Any `.nota` receipt file can be checked here too (`#/receipt`).
 */
import { get } from '../../api.ts';
import { formatTime, h, replace, saveFile, showError, statusArea } from '../../dom.ts';
import { plainError } from '../../errors.ts';
import { decodeNota, type Nota, notaKeys, type Verdict, verifyNota } from '../../nota.ts';
import { FLOW_ARROWS, failed, failedSentence, flowOf, signedAmount, typeWords } from '../../transactions.ts';
import type { Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { showReceiptFailure } from './transaction-view.ts';

/** A payload field as text (the file may hold anything: it is shown, never interpreted). */
function text(value: unknown): string | null {
  if (value === null || value === undefined || value === '') return null;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : JSON.stringify(value);
}

/** The payload as far as it reads as a transaction: the rendering shows only strings it finds. */
function asTransaction(payload: Record<string, unknown>): Transaction {
  return payload as unknown as Transaction;
}

/** Only a transaction that went through is a receipt of a payment: what it says when the signed status is not that. */
const FINAL_OK = ['CONFIRMED', 'SETTLED'];

function unconfirmedReason(p: Record<string, unknown>, keyId: string): string {
  const tx = asTransaction(p);
  const signed = `The service did sign this record (key ${keyId}), but only a confirmed transaction’s receipt can be verified.`;
  if (failed(tx)) return `It records a transaction that failed, not a payment. ${signed}`;
  return `This transaction is not confirmed (its status is ${text(p.status) ?? 'unknown'}). ${signed}`;
}

/**
 * "Verified" needs both: the signature checks, and the transaction it records went through. A genuine record of a
 * FAILED transaction is no proof of a payment.
 */
function verdictBox(verdict: Verdict, p: Record<string, unknown>): HTMLElement {
  if (verdict.verified && !FINAL_OK.includes(String(p.status))) {
    return h(
      'div',
      { class: 'verdict not-verified', 'data-verified': 'false', 'data-signature': 'genuine' },
      h('p', { class: 'verdict-head' }, h('span', { 'aria-hidden': 'true' }, '✗ '), 'Not verified'),
      h('p', null, unconfirmedReason(p, verdict.keyId)),
    );
  }
  return verdict.verified
    ? h(
        'div',
        { class: 'verdict verified', 'data-verified': 'true' },
        h('p', { class: 'verdict-head' }, h('span', { 'aria-hidden': 'true' }, '✓ '), 'Verified'),
        h(
          'p',
          null,
          'This receipt is signed by this service, and checked in your browser against its published key ',
          h('code', null, verdict.keyId),
          '. Nothing in it was changed after it was signed.',
        ),
      )
    : h(
        'div',
        { class: 'verdict not-verified', 'data-verified': 'false' },
        h('p', { class: 'verdict-head' }, h('span', { 'aria-hidden': 'true' }, '✗ '), 'Not verified'),
        h('p', null, verdict.reason, ' Do not rely on the figures below.'),
      );
}

function row(label: string, value: unknown, mono = false): HTMLElement[] {
  const shown = text(value);
  if (shown === null) return [];
  return [h('dt', null, label), h('dd', null, mono ? h('code', null, shown) : shown)];
}

/** The receipt as a document: the verdict first, then what it says. */
export function receiptDocument(nota: Nota, verdict: Verdict): HTMLElement {
  const p = nota.payload;
  const tx = asTransaction(p);
  const known = typeof p.type === 'string' && typeof p.token === 'string';
  const flow = known ? flowOf(tx) : null;
  return h(
    'article',
    { class: 'card receipt', 'aria-labelledby': 'receipt-title' },
    h(
      'header',
      { class: 'receipt-head' },
      h('h2', { id: 'receipt-title' }, 'sealpay receipt'),
      h('p', { class: 'muted' }, `Issued ${formatTime(nota.issuedAt)}`),
    ),
    verdictBox(verdict, p),
    known
      ? h(
          'p',
          { class: 'big-amount' },
          `${typeWords(tx)} `,
          h('strong', { class: `receipt-amount flow-${flow}` }, signedAmount(tx)),
        )
      : null,
    known && failed(tx) ? h('p', { class: 'not-sent' }, failedSentence(tx)) : null,
    h(
      'dl',
      { class: 'facts receipt-facts' },
      known && flow ? row('What', typeWords(tx)) : row('Type', p.type),
      flow ? row('Direction', FLOW_ARROWS[flow].words) : [],
      row('Status', p.status),
      row('Date', typeof p.createdAt === 'string' ? formatTime(p.createdAt) : p.createdAt),
      row('From address', p.fromAddress, true),
      row('To address', p.toAddress, true),
      row('Transaction hash', p.txHash, true),
      row('Payout hash', p.settlementTxHash, true),
      row('Network (chain id)', p.chainId),
      row('Block', p.blockNumber),
      row('Block hash', p.blockHash, true),
      row('Log index', p.logIndex),
      row('Reference', p.id, true),
      row('Signed with key', nota.signature?.keyId, true),
    ),
  );
}

/** Decodes, checks and renders a `.nota` string into `slot`; a string that is not a receipt is said so. */
async function showNota(slot: HTMLElement, encoded: string): Promise<void> {
  let nota: Nota;
  try {
    nota = decodeNota(encoded);
  } catch (error) {
    replace(slot, h('p', { class: 'error', role: 'alert' }, (error as Error).message));
    return;
  }
  replace(slot, h('p', { class: 'muted' }, 'Checking the signature…'));
  const verdict = await verifyNota(nota, await notaKeys());
  replace(slot, receiptDocument(nota, verdict));
}

function fileChecker(status: HTMLElement, slot: HTMLElement): HTMLElement {
  const input = h('input', { type: 'file', accept: '.nota,text/plain', id: 'nota-file' });
  input.addEventListener('change', async () => {
    const file = input.files?.[0];
    if (!file) return;
    replace(status);
    try {
      await showNota(slot, await file.text());
    } catch (error) {
      showError(status, plainError(error));
    }
  });
  return h(
    'section',
    { class: 'card no-print', 'aria-labelledby': 'check-file' },
    h('h2', { id: 'check-file' }, 'Check a receipt file'),
    h('p', null, 'Open a .nota receipt to see it in plain words and check its signature in this browser.'),
    h('div', { class: 'field' }, h('label', { for: input.id }, 'Receipt file (.nota)'), input),
  );
}

export async function receiptView(_ctx: Ctx, id: string | null): Promise<HTMLElement> {
  const status = statusArea();
  const slot = h('div', { class: 'receipt-slot' });
  const actions = h('div', { class: 'actions no-print' });
  document.title = 'Receipt · sealpay';
  if (id) {
    try {
      const { filename, nota } = await get<{ filename: string; nota: string }>(
        `/transactions/${encodeURIComponent(id)}/nota`,
      );
      await showNota(slot, nota);
      const print = h('button', { type: 'button' }, 'Print or save as PDF');
      print.addEventListener('click', () => window.print());
      const download = h('button', { type: 'button', class: 'secondary' }, 'Download .nota file');
      download.addEventListener('click', () => saveFile(filename, new Blob([nota], { type: 'text/plain' })));
      replace(actions, print, download);
    } catch (error) {
      showReceiptFailure(status, error);
    }
  }
  return h(
    'div',
    { class: 'view receipt-view' },
    h(
      'p',
      { class: 'back no-print' },
      id
        ? h('a', { href: `#/transaction/${encodeURIComponent(id)}` }, '← Back to the transaction')
        : h('a', { href: '#/wallets' }, '← Back to Wallets'),
    ),
    h('h1', { tabindex: -1 }, 'Receipt'),
    status,
    actions,
    slot,
    fileChecker(status, slot),
  );
}
