/**
 * The caller's transactions, newest first, paged: what happened in plain words, which way the money went, the
 * amount and status; each row links to its details (history, hashes, explorer, receipt).
 */

import { get, query } from '../../api.ts';
import { formatTime, h, pager, replace, statusBadge } from '../../dom.ts';
import {
  FLOW_ARROWS,
  failed,
  failedSentence,
  flowOf,
  partyWords,
  signedAmount,
  typeWords,
} from '../../transactions.ts';
import { IN_FLIGHT, type Page, type Transaction } from '../../types.ts';
import { type Ctx, walletName, walletNameAt } from '../context.ts';

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

  function txRow(tx: Transaction): HTMLTableRowElement {
    const flow = flowOf(tx);
    const arrow = FLOW_ARROWS[flow];
    const words = typeWords(tx);
    const party = partyWords(tx, (address) => walletNameAt(ctx, address));
    const details = h(
      'a',
      { href: `#/transaction/${encodeURIComponent(tx.id)}`, class: 'details-link' },
      'Details',
    );
    details.setAttribute('aria-label', `Details of ${words.toLowerCase()} ${signedAmount(tx)}`);
    return h(
      'tr',
      { 'data-tx-id': tx.id, 'data-status': tx.status, 'data-direction': tx.direction, 'data-type': tx.type },
      h('td', { 'data-label': 'When', class: 'when' }, formatTime(tx.createdAt)),
      h(
        'td',
        { 'data-label': 'What', class: 'what' },
        h(
          'span',
          { class: 'what-head' },
          h('span', { class: `flow flow-${flow}`, title: arrow.words, 'aria-hidden': 'true' }, arrow.symbol),
          // A failed row's reason says "nothing moved" already: the arrow's words once, not twice.
          failed(tx) ? null : h('span', { class: 'visually-hidden' }, `${arrow.words}: `),
          h('span', { class: 'tx-words' }, words),
        ),
        party ? h('span', { class: 'muted party' }, ` ${party}`) : null,
        h('span', { class: 'muted wallet-name' }, ` · ${walletName(ctx, tx.walletId)}`),
        // Why it failed, under what it was (not beside the badge: a long reason would squeeze the row on a phone).
        failed(tx) ? h('span', { class: 'error small tx-reason' }, failedSentence(tx)) : null,
      ),
      h('td', { 'data-label': 'Amount', class: `num amount flow-${flow}` }, signedAmount(tx)),
      h('td', { 'data-label': 'Status', class: 'tx-state' }, statusBadge(tx.status)),
      h('td', { 'data-label': 'More', class: 'more' }, details),
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
            { class: 'responsive activity-table' },
            h('caption', { class: 'visually-hidden' }, 'Transactions, newest first'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['When', 'What', 'Amount', 'Status', 'More'].map((c) => h('th', { scope: 'col' }, c)),
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
