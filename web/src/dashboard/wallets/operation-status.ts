/**
 * A live status line per submitted money movement: sending → queued → confirmed / settled / failed (with the
 * service's reason), polled fast while the backend usually finishes (well under a second), then backing off. The
 * outcome is announced to screen readers by a polite live region.
 */

import { get } from '../../api.ts';
import { h, replace, statusBadge } from '../../dom.ts';
import { plainCode } from '../../errors.ts';
import { formatAmount } from '../../money.ts';
import { IN_FLIGHT, type Transaction } from '../../types.ts';

/** Polls every 250 ms for the first 3 s (most operations finish there), then doubles up to every 4 s. */
export function pollDelayMs(elapsedMs: number): number {
  if (elapsedMs < 3_000) return 250;
  return Math.min(4_000, 500 * 2 ** Math.floor((elapsedMs - 3_000) / 4_000));
}

const WORDS: Record<string, string> = {
  QUEUED: 'queued, waiting for the network…',
  PENDING: 'sent to the network, waiting for confirmation…',
  SETTLING: 'confirmed on-chain, settling…',
  CONFIRMED: 'confirmed.',
  SETTLED: 'settled: the public STABLE is in the wallet.',
};

/** The reason a transaction failed, in the service's own words when it gave one. */
export function failureReason(tx: Pick<Transaction, 'errorCode' | 'error'>): string {
  return plainCode(tx.errorCode, tx.error);
}

export interface StatusLine {
  readonly element: HTMLLIElement;
  /** No answer yet: the line says it is checking (with an optional action such as "Try again"). */
  checking(message: string, action?: HTMLButtonElement): void;
  /** The request was refused: the line goes (the form shows the reason). */
  remove(): void;
  /**
   * The service queued it: the line follows the transaction until it ends, calling `changed` at every status change
   * it shows (the balances the form checks against are read again then), the last one included.
   */
  follow(tx: Transaction, changed: (tx: Transaction) => void): void;
}

export interface StatusLines {
  /** The visible list of lines (newest first). */
  readonly element: HTMLElement;
  /** A new line for a submission described by `what` ("Fund of 100 STABLE"). */
  add(what: string): StatusLine;
}

const MAX_LINES = 5;

export function statusLines(): StatusLines {
  const list = h('ul', { class: 'op-status', 'aria-label': 'Your operations' });
  // One polite live region for the whole list: each change is announced once, as a sentence.
  const announcer = h('p', {
    class: 'visually-hidden',
    role: 'status',
    'aria-live': 'polite',
    'data-announcer': 'operations',
  });
  const element = h('div', { class: 'op-status-area' }, list, announcer);
  const announce = (sentence: string) => {
    announcer.textContent = sentence;
  };

  function add(what: string): StatusLine {
    const text = h('span', { class: 'op-text' }, `${what}: sending…`);
    // The badge is the colour cue of the sentence next to it, which says the same: not read twice.
    const badge = h('span', { class: 'op-badge', 'aria-hidden': 'true' });
    const extra = h('span', { class: 'op-extra' });
    const line = h('li', { class: 'op-line', 'data-status': 'SENDING' }, badge, ' ', text, ' ', extra);
    list.prepend(line);
    while (list.children.length > MAX_LINES) list.lastElementChild?.remove();

    const show = (status: string, sentence: string, action?: HTMLButtonElement) => {
      line.setAttribute('data-status', status);
      replace(badge, IN_FLIGHT.includes(status) || status === 'CHECKING' ? null : statusBadge(status));
      text.textContent = sentence;
      replace(extra, action ?? null);
    };

    return {
      element: line,
      checking(message, action) {
        show('CHECKING', `${what}: ${message}`, action);
        announce(`${what}: ${message}`);
      },
      remove() {
        line.remove();
      },
      follow(tx, changed) {
        const label = `${what.split(' of ')[0]} of ${formatAmount(tx.amount)} ${tx.token}`;
        const render = (current: Transaction) => {
          if (current.status === 'FAILED') {
            const sentence = `${label} failed: ${failureReason(current)}`;
            show('FAILED', sentence);
            line.classList.add('op-failed');
            announce(sentence);
          } else {
            const sentence = `${label}: ${WORDS[current.status] ?? current.status.toLowerCase()}`;
            show(current.status, sentence);
            if (!IN_FLIGHT.includes(current.status)) announce(sentence);
          }
          line.setAttribute('data-tx-id', current.id);
        };
        render(tx);
        announce(`${label}: ${WORDS[tx.status] ?? tx.status.toLowerCase()}`);
        const started = Date.now();
        let last = tx;
        const tick = async () => {
          // The view was left or the session ended (the line is gone): stop asking.
          if (!line.isConnected) return;
          try {
            const { transaction } = await get<{ transaction: Transaction }>(`/transactions/${tx.id}`);
            const moved = transaction.status !== last.status;
            last = transaction;
            if (moved) {
              render(transaction);
              changed(transaction);
            }
          } catch {
            // A missed poll is retried by the next one (the service's trouble shows elsewhere).
          }
          if (IN_FLIGHT.includes(last.status)) {
            window.setTimeout(() => void tick(), pollDelayMs(Date.now() - started));
          }
        };
        // An answer that is already final (a repeated Idempotency-Key) is a change the form has not seen yet.
        if (IN_FLIGHT.includes(tx.status)) window.setTimeout(() => void tick(), pollDelayMs(0));
        else changed(tx);
      },
    };
  }

  return { element, add };
}
