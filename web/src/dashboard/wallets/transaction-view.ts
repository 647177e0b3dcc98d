/**
 * One transaction's details at `#/transaction/{id}`: what happened in plain words, its status history, every chain
 * hash with a copy button and an explorer link where the network has one, and its receipt.
 *
 * The API keeps no step-by-step log of a transaction (events are recorded only for subscribed webhooks): the history
 * is what the row itself holds, its creation, the block it landed in and its last change.
 */
import { ApiError, get } from '../../api.ts';
import {
  copyButton,
  enableAgain,
  formatTime,
  h,
  replace,
  saveFile,
  showError,
  showFailure,
  showInfo,
  statusArea,
  statusBadge,
} from '../../dom.ts';
import {
  FLOW_ARROWS,
  failed,
  failedSentence,
  flowOf,
  partyWords,
  signedAmount,
  typeExplained,
  typeWords,
  underway,
  underwaySentence,
} from '../../transactions.ts';
import { IN_FLIGHT, type Transaction } from '../../types.ts';
import { type Ctx, walletName, walletNameAt } from '../context.ts';

const IN_FLIGHT_POLL_MS = 2000;

/** The explorer page of a chain hash, when the network has an explorer (the local chain has none). */
export function explorerLink(ctx: Ctx, hash: string): string | null {
  const base = ctx.network?.explorerBaseUrl;
  return base ? `${base}/tx/${hash}` : null;
}

/** A whole hash, its copy button, and its explorer link where there is one. */
function hashLine(ctx: Ctx, label: string, hash: string, explorerUrl: string | null): HTMLElement {
  const url = explorerUrl ?? explorerLink(ctx, hash);
  return h(
    'div',
    { class: 'hash-line' },
    h('code', { class: 'hash' }, hash),
    h(
      'div',
      { class: 'actions' },
      copyButton(hash, 'Copy', label.toLowerCase()),
      url
        ? h(
            'a',
            { href: url, target: '_blank', rel: 'noopener noreferrer', class: 'button-link secondary small' },
            'View in explorer',
          )
        : null,
    ),
  );
}

/** Downloads the transaction's `.nota` receipt (the machine-readable file); says why when there is none yet. */
export async function downloadNota(tx: Pick<Transaction, 'id'>, status: Element): Promise<void> {
  try {
    const { filename, nota } = await get<{ filename: string; nota: string }>(
      `/transactions/${encodeURIComponent(tx.id)}/nota`,
    );
    saveFile(filename, new Blob([nota], { type: 'text/plain' }));
    showInfo(status, `Receipt ${filename} saved.`);
  } catch (error) {
    showReceiptFailure(status, error);
  }
}

/**
 * Why a receipt cannot be had, in plain words; any other failure as every view shows it (one caused by the
 * service's trouble goes once the service answers again).
 */
export function showReceiptFailure(status: Element, error: unknown): void {
  if (error instanceof ApiError && error.code === 'receipt_unavailable') {
    showError(
      status,
      error.retryable
        ? 'No receipt yet: the transaction has not reached the chain. Try again in a moment.'
        : 'This transaction failed before reaching the chain, so it has no receipt.',
    );
  } else {
    showFailure(status, error);
  }
}

function history(tx: Transaction): HTMLElement {
  const steps: HTMLElement[] = [
    h(
      'li',
      null,
      h('span', { class: 'when' }, formatTime(tx.createdAt)),
      ' ',
      h('span', null, 'Submitted: queued for the chain.'),
    ),
  ];
  if (tx.blockNumber !== null) {
    steps.push(h('li', null, h('span', null, `Recorded on the chain in block ${tx.blockNumber}.`)));
  }
  if (tx.updatedAt !== tx.createdAt || tx.status !== 'QUEUED') {
    steps.push(
      h(
        'li',
        null,
        h('span', { class: 'when' }, formatTime(tx.updatedAt)),
        ' ',
        h('span', null, 'Now ', statusBadge(tx.status)),
        failed(tx) ? h('span', { class: 'error' }, ` ${failedSentence(tx)}`) : null,
      ),
    );
  }
  return h('ol', { class: 'history' }, steps);
}

function detailsOf(ctx: Ctx, tx: Transaction, status: HTMLElement): HTMLElement {
  const flow = flowOf(tx);
  const words = typeWords(tx);
  const party = partyWords(tx, (address) => walletNameAt(ctx, address));
  const gasTxHash = typeof tx.metadata?.gasTxHash === 'string' ? tx.metadata.gasTxHash : null;
  const letterId = typeof tx.metadata?.letterId === 'string' ? tx.metadata.letterId : null;
  const hashes: HTMLElement[] = [];
  if (tx.txHash)
    hashes.push(
      h('dt', null, 'Transaction hash'),
      h('dd', null, hashLine(ctx, 'Transaction hash', tx.txHash, tx.explorerUrl)),
    );
  if (tx.settlementTxHash) {
    hashes.push(
      h('dt', null, 'Payout hash'),
      h('dd', null, hashLine(ctx, 'Payout hash', tx.settlementTxHash, null)),
    );
  }
  if (gasTxHash)
    hashes.push(
      h('dt', null, 'Gas top-up hash'),
      h('dd', null, hashLine(ctx, 'Gas top-up hash', gasTxHash, null)),
    );

  const download = h('button', { type: 'button', class: 'secondary' }, 'Download .nota file');
  download.addEventListener('click', async () => {
    download.disabled = true;
    await downloadNota(tx, status);
    enableAgain(download);
  });
  const hasReceipt = tx.blockNumber !== null || (tx.txHash !== null && !IN_FLIGHT.includes(tx.status));

  return h(
    'div',
    { class: 'tx-details', 'data-tx-id': tx.id, 'data-status': tx.status },
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tx-what' },
      h('h2', { id: 'tx-what' }, 'What happened'),
      h(
        'p',
        { class: `big-amount flow-${flow}` },
        h('span', { class: `flow flow-${flow}`, 'aria-hidden': 'true' }, FLOW_ARROWS[flow].symbol),
        ' ',
        h('strong', { class: `tx-amount flow-${flow}` }, signedAmount(tx)),
      ),
      failed(tx) ? h('p', { class: 'not-sent' }, failedSentence(tx)) : null,
      underway(tx) ? h('p', { class: 'underway-note' }, underwaySentence(tx)) : null,
      h('p', null, typeExplained(tx)),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'What'),
        h('dd', { class: 'tx-words' }, words),
        h('dt', null, 'Direction'),
        h('dd', { class: 'tx-direction' }, FLOW_ARROWS[flow].words),
        h('dt', null, 'Wallet'),
        h('dd', null, walletName(ctx, tx.walletId)),
        party
          ? [
              h('dt', null, 'Other side'),
              h(
                'dd',
                null,
                party.replace(/^(from|to) /, (m) => `${m[0]?.toUpperCase()}${m.slice(1)}`),
              ),
            ]
          : null,
        tx.fromAddress
          ? [h('dt', null, 'From address'), h('dd', null, h('code', null, tx.fromAddress))]
          : null,
        tx.toAddress ? [h('dt', null, 'To address'), h('dd', null, h('code', null, tx.toAddress))] : null,
        letterId
          ? [h('dt', null, 'Letter'), h('dd', null, h('a', { href: '#/letters' }, h('code', null, letterId)))]
          : null,
        h('dt', null, 'Reference'),
        h('dd', null, h('code', null, tx.id)),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tx-history' },
      h('h2', { id: 'tx-history' }, 'Status history'),
      h('p', { class: 'tx-status' }, 'Status: ', statusBadge(tx.status)),
      history(tx),
      h(
        'p',
        { class: 'muted small' },
        'The service records when a transaction was submitted, the block it landed in and its last change; it keeps no log of each step in between.',
      ),
      IN_FLIGHT.includes(tx.status)
        ? h('p', { class: 'muted live' }, 'Updating while it is in progress…')
        : null,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tx-chain' },
      h('h2', { id: 'tx-chain' }, 'On the chain'),
      hashes.length > 0
        ? h('dl', { class: 'facts hashes' }, hashes)
        : h(
            'p',
            { class: 'muted' },
            failed(tx)
              ? 'No chain transaction. It failed before reaching the chain: nothing was sent.'
              : 'No chain transaction yet.',
          ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Network'),
        h('dd', null, `chain ${tx.chainId}`),
        tx.blockNumber !== null ? [h('dt', null, 'Block'), h('dd', null, String(tx.blockNumber))] : null,
      ),
      ctx.network && !ctx.network.explorerBaseUrl
        ? h(
            'p',
            { class: 'muted small' },
            'This network has no public explorer (it is the service’s own local chain), so there is no explorer link.',
          )
        : null,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'tx-receipt' },
      h('h2', { id: 'tx-receipt' }, 'Receipt'),
      hasReceipt
        ? [
            h(
              'p',
              null,
              failed(tx)
                ? 'A record signed by the service that this transaction failed on the chain and moved nothing: it is not proof of a payment.'
                : 'A receipt signed by the service, checked in your browser, that you can print or save as PDF.',
            ),
            h(
              'div',
              { class: 'actions' },
              h(
                'a',
                { href: `#/receipt/${encodeURIComponent(tx.id)}`, class: 'button-link' },
                'View receipt',
              ),
              download,
            ),
          ]
        : h(
            'p',
            { class: 'muted' },
            tx.status === 'FAILED'
              ? 'This transaction failed before reaching the chain, so it has no receipt.'
              : 'The receipt is available once the transaction is recorded on the chain.',
          ),
    ),
  );
}

export async function transactionView(ctx: Ctx, named: string | null): Promise<HTMLElement> {
  const status = statusArea();
  const id = named ?? '';
  if (!id) {
    location.replace('#/wallets');
    return h('div', { class: 'view' });
  }
  const body = h('div');
  const heading = h('h1', { tabindex: -1 }, 'Transaction');
  let shown = '';

  async function load(): Promise<boolean> {
    const { transaction } = await get<{ transaction: Transaction }>(
      `/transactions/${encodeURIComponent(id)}`,
    );
    const snapshot = JSON.stringify(transaction);
    if (snapshot !== shown) {
      shown = snapshot;
      heading.textContent = `${typeWords(transaction)}${failed(transaction) ? ':' : ''} ${signedAmount(transaction)}`;
      document.title = `${typeWords(transaction)} · sealpay`;
      replace(body, detailsOf(ctx, transaction, status));
    }
    return IN_FLIGHT.includes(transaction.status);
  }

  try {
    let inFlight = await load();
    if (inFlight) {
      ctx.every(IN_FLIGHT_POLL_MS, async () => {
        if (!inFlight) return;
        try {
          inFlight = await load();
        } catch (error) {
          showFailure(status, error);
        }
      });
    }
  } catch (error) {
    showFailure(status, error);
  }
  return h(
    'div',
    { class: 'view transaction-view' },
    h('p', { class: 'back' }, h('a', { href: '#/wallets' }, '← Back to Wallets')),
    heading,
    status,
    body,
  );
}
