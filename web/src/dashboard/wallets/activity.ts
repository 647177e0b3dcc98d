/** The caller's transactions, newest first, paged; with their hashes, statuses and notarized receipts. */

import { ApiError, get, query } from '../../api.ts';
import {
  formatTime,
  h,
  pager,
  replace,
  saveFile,
  shortHex,
  showError,
  showFailure,
  showInfo,
  statusBadge,
  txLink,
} from '../../dom.ts';
import { plainCode } from '../../errors.ts';
import { formatAmount } from '../../money.ts';
import { IN_FLIGHT, type Page, type Transaction } from '../../types.ts';
import { type Ctx, walletName } from '../context.ts';

const PAGE_SIZE = 10;

export interface Activity {
  readonly element: HTMLElement;
  /** Reads the current page again (and runs `alongside` meanwhile); re-renders only what changed. */
  refresh(): Promise<void>;
  /** Back to the newest page, read again (after a new operation was queued). */
  showNewest(): Promise<void>;
  render(): void;
  /** Whether an operation on the page is still in progress (the view then polls faster). */
  inFlight(): boolean;
  /** When the list was last asked for (`Date.now()`), by a poll or a refresh. */
  readonly polledAt: number;
  /** A poll: marks the time first, so that a slow answer is not asked for again meanwhile. */
  poll(): Promise<void>;
}

/**
 * `alongside` is read with every refresh (the wallets' public balances); `settled` gets the wallets of operations
 * that completed since the previous refresh (their revealed balances went stale).
 */
export function activityList(
  ctx: Ctx,
  status: HTMLElement,
  hooks: {
    alongside: () => Promise<void>;
    settled: (walletIds: Set<string>) => Promise<void>;
    /** Each read of the list, with the statuses its transactions had before it (announced to screen readers). */
    changed?: (before: Map<string, string>, items: Transaction[]) => void;
  },
): Activity {
  const element = h('div', { class: 'activity' });
  let transactions: Page<Transaction> = {
    items: [],
    page: 1,
    pageSize: PAGE_SIZE,
    total: 0,
    nextCursor: null,
  };
  let page = 1;
  let polledAt = 0;

  async function downloadReceipt(tx: Transaction, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const { filename, nota } = await get<{ filename: string; nota: string }>(`/transactions/${tx.id}/nota`);
      saveFile(filename, new Blob([nota], { type: 'text/plain' }));
      showInfo(status, `Receipt ${filename} saved.`);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'receipt_unavailable') {
        const retryable = (error.details as { retryable?: boolean } | undefined)?.retryable;
        showError(
          status,
          retryable
            ? 'No receipt yet: the transaction is still queued. Try again when it has a hash.'
            : 'This transaction failed before reaching the chain, so it has no receipt.',
        );
      } else {
        showFailure(status, error);
      }
    } finally {
      button.disabled = false;
    }
  }

  function txRow(tx: Transaction): HTMLTableRowElement {
    const receipt = tx.txHash ? h('button', { type: 'button', class: 'secondary small' }, 'Receipt') : null;
    receipt?.setAttribute(
      'aria-label',
      `Download receipt of ${tx.type.toLowerCase()} ${tx.amount} ${tx.token}`,
    );
    receipt?.addEventListener('click', () => void downloadReceipt(tx, receipt));
    const hash = txLink(tx.txHash, tx.explorerUrl, '—');
    const incoming = tx.direction === 'in';
    // The counterparty is an address (money received from it) or a label (`Sandbox faucet`, a letter's leg).
    const named = (value: string | null) =>
      value && /^0x[0-9a-fA-F]{40}$/.test(value) ? shortHex(value, 4) : value;
    const party = incoming
      ? named(tx.counterparty ?? tx.fromAddress)
      : (tx.counterparty ?? (tx.toAddress ? shortHex(tx.toAddress, 4) : null));
    // A confidential amount received by an external wallet: only that wallet's key can read it.
    const amount = tx.amount === null ? 'encrypted' : formatAmount(tx.amount);
    return h(
      'tr',
      { 'data-tx-id': tx.id, 'data-status': tx.status, 'data-direction': tx.direction },
      h('td', { 'data-label': 'When' }, formatTime(tx.createdAt)),
      h(
        'td',
        { 'data-label': 'Type' },
        h(
          'span',
          { class: `direction ${tx.direction}`, title: incoming ? 'Received' : 'Sent' },
          incoming ? '↓ in ' : '↑ out ',
        ),
        tx.type,
      ),
      h('td', { 'data-label': 'Amount', class: 'num' }, `${amount} ${tx.token}`),
      h(
        'td',
        { 'data-label': 'Status' },
        statusBadge(tx.status),
        tx.status === 'FAILED'
          ? h('span', { class: 'error small' }, ` ${plainCode(tx.errorCode, tx.error)}`)
          : null,
      ),
      h(
        'td',
        { 'data-label': 'Wallet' },
        walletName(ctx, tx.walletId),
        party ? h('span', { class: 'muted' }, incoming ? ` ← from ${party}` : ` → ${party}`) : null,
      ),
      h('td', { 'data-label': 'Hash' }, hash),
      h('td', { 'data-label': 'Receipt' }, receipt ?? '—'),
    );
  }

  function renderActivity(): void {
    const inFlight = transactions.items.some((t) => IN_FLIGHT.includes(t.status));
    // Keep keyboard focus on the same control across a refresh.
    const focused =
      document.activeElement instanceof HTMLElement && element.contains(document.activeElement)
        ? document.activeElement
        : null;
    const focusRow = focused?.closest('tr')?.getAttribute('data-tx-id');
    const focusText = focused?.textContent;
    replace(
      element,
      transactions.items.length === 0
        ? h('p', { class: 'empty' }, 'No transactions yet.')
        : h(
            'table',
            { class: 'responsive' },
            h('caption', { class: 'visually-hidden' }, 'Transactions, newest first'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['When', 'Type', 'Amount', 'Status', 'Wallet', 'Hash', 'Receipt'].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h('tbody', null, transactions.items.map(txRow)),
          ),
      pager(
        { page, pageSize: PAGE_SIZE, total: transactions.total },
        (to) => {
          page = to;
          void refresh();
        },
        inFlight ? h('span', { class: 'muted live' }, 'Updating while operations are in progress…') : null,
      ),
    );
    if (focused) {
      const scope = focusRow ? element.querySelector(`tr[data-tx-id="${CSS.escape(focusRow)}"]`) : element;
      const again = [...(scope?.querySelectorAll<HTMLElement>('button, a') ?? [])].find(
        (e) => e.textContent === focusText,
      );
      again?.focus();
    }
  }

  async function refresh(): Promise<void> {
    const before = new Map(transactions.items.map((t) => [t.id, t.status]));
    const [list] = await Promise.all([
      get<Page<Transaction>>(`/transactions${query({ page, pageSize: PAGE_SIZE })}`),
      hooks.alongside().catch(() => {}),
    ]);
    const changed = JSON.stringify(list) !== JSON.stringify(transactions);
    transactions = list;
    polledAt = Date.now();
    if (changed) renderActivity();
    hooks.changed?.(before, list.items);
    await hooks.settled(
      new Set(
        list.items
          .filter((t) => IN_FLIGHT.includes(before.get(t.id) ?? '') && !IN_FLIGHT.includes(t.status))
          .map((t) => t.walletId),
      ),
    );
  }

  return {
    element,
    refresh,
    async showNewest() {
      page = 1;
      await refresh();
    },
    render: renderActivity,
    inFlight: () => transactions.items.some((t) => IN_FLIGHT.includes(t.status)),
    get polledAt() {
      return polledAt;
    },
    async poll() {
      polledAt = Date.now();
      await refresh();
    },
  };
}
