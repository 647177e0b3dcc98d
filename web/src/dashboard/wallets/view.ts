/** Wallets with their three balances, money movement (fund, mint, transfer, redeem) and the transaction list. */

import { h, replace, showFailure, statusArea, uid } from '../../dom.ts';
import { formatAmount } from '../../money.ts';
import { typeNoun } from '../../transactions.ts';
import { IN_FLIGHT, type Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { activityList } from './activity.ts';
import { addWalletForm } from './add-wallet.ts';
import { walletCards } from './cards.ts';
import { firstRunGuide } from './first-run.ts';
import { type MoveMoneyForm, moveMoneyForm } from './move-money.ts';
import { failureReason } from './operation-status.ts';

/** Operations submitted here are followed by their own status line; the list catches up with the others. */
const FAST_POLL_MS = 2000;
const SLOW_POLL_MS = 15000;
/**
 * After failed reads, try again soon, then less and less often while the service stays down (3 s, 6 s, 12 s… at
 * most 30 s): the error goes as soon as the service answers.
 */
export function retryPollMs(failures: number): number {
  return Math.min(30_000, 3000 * 2 ** Math.max(0, failures - 1));
}

/** A poll run one at a time that, while it fails, waits longer and longer (`retryPollMs`) before asking again. */
function gently(work: () => Promise<void>): () => Promise<void> {
  let busy = false;
  let failures = 0;
  let failedAt = 0;
  return async () => {
    if (busy || (failures > 0 && Date.now() - failedAt < retryPollMs(failures))) return;
    busy = true;
    try {
      await work();
      failures = 0;
    } catch {
      failures += 1;
      failedAt = Date.now();
    } finally {
      busy = false;
    }
  };
}

/** A sentence for screen readers about a transaction that ended or arrived. */
function activitySentence(tx: Transaction): string {
  const what = `${typeNoun(tx)} of ${tx.amount === null ? 'an encrypted amount' : `${formatAmount(tx.amount)} ${tx.token}`}`;
  if (tx.status === 'FAILED') return `${what} failed: ${failureReason(tx)}`;
  if (IN_FLIGHT.includes(tx.status)) return `${what} ${tx.direction === 'in' ? 'incoming' : 'started'}.`;
  return `${what} ${tx.direction === 'in' ? 'received' : tx.status.toLowerCase()}.`;
}

export async function walletsView(ctx: Ctx): Promise<HTMLElement> {
  await ctx.reloadWallets().catch(() => {});
  const activityStatus = statusArea();
  const moveSlot = h('div');
  let moveForm: MoveMoneyForm | null = null;
  // The Activity's live region: what ended or arrived, other than the operations followed by a status line.
  const activityAnnouncer = h('p', {
    class: 'visually-hidden',
    role: 'status',
    'aria-live': 'polite',
    'data-announcer': 'activity',
  });
  let primed = false;

  /** The wallet list changed (created, primary): rebuild the cards and the forms that list wallets. */
  function walletsChanged(): void {
    cards.render();
    moveForm = moveMoneyForm(ctx, {
      publicBalance: (walletId) => cards.publicBalance(walletId),
      confidentialBalance: (walletId) => cards.confidentialBalance(walletId),
      readBalance: (walletId, kind) => (kind === 'public' ? cards.loadGas() : cards.revealBalance(walletId)),
      queued: () => activity.showNewest(),
      async stale(walletId) {
        await Promise.all([activity.refresh(), cards.refreshRevealed([walletId])]);
      },
    });
    replace(moveSlot, moveForm.element);
  }

  const cards = walletCards(ctx, activityStatus, walletsChanged);
  const activity = activityList(ctx, {
    alongside: async () => {
      await cards.loadGas();
      await moveForm?.refreshAvailable();
    },
    // Balances shown decrypted go stale when one of their transactions completes: read them again.
    settled: (walletIds) => cards.refreshRevealed(walletIds),
    changed(before, items) {
      // Another page of the list (nothing in common with the one before) is not news.
      const samePage = before.size === 0 || items.some((tx) => before.has(tx.id));
      const sentences =
        primed && samePage
          ? items
              .filter((tx) => !moveSlot.querySelector(`[data-tx-id="${CSS.escape(tx.id)}"]`))
              .filter((tx) => {
                const was = before.get(tx.id);
                // New on the list (received, or made elsewhere: another session, an API key), or just ended.
                if (was === undefined) return true;
                return was !== tx.status && IN_FLIGHT.includes(was) && !IN_FLIGHT.includes(tx.status);
              })
              .map(activitySentence)
          : [];
      primed = true;
      if (sentences.length > 0) activityAnnouncer.textContent = sentences.join(' ');
    },
  });

  let failedAt = 0;
  let failures = 0;
  /** A read of the list; a failure shows until the next read succeeds (then it is cleared). */
  async function read(work: () => Promise<void>): Promise<void> {
    try {
      await work();
      if (failedAt) replace(activityStatus);
      failedAt = 0;
      failures = 0;
    } catch (error) {
      failedAt = Date.now();
      failures += 1;
      showFailure(activityStatus, error);
    }
  }

  const guide = firstRunGuide(ctx);
  await guide.refresh().catch(() => {});
  // Ticks the guide's steps off as they are done (it stops asking once finished or hidden).
  ctx.every(
    5000,
    gently(() => guide.refresh()),
  );

  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh');
  refresh.addEventListener('click', () => void read(() => activity.refresh()));

  await Promise.all([cards.loadGas().catch(() => {}), read(() => activity.refresh())]);
  walletsChanged();
  activity.render();

  // One poll at a time: a read the service does not answer is retried by the client for seconds, and ticks that
  // started meanwhile would pile up (several requests a second while the service is down).
  let polling = false;
  ctx.every(1000, async () => {
    if (polling) return;
    if (failedAt) {
      // The service is in trouble: back off from the last failure, not from the last good read.
      if (Date.now() - failedAt < retryPollMs(failures)) return;
    } else if (Date.now() - activity.polledAt < (activity.inFlight() ? FAST_POLL_MS : SLOW_POLL_MS)) return;
    polling = true;
    try {
      await read(() => activity.poll());
    } finally {
      polling = false;
    }
  });

  const addHeading = uid('h');
  const moveHeading = uid('h');
  const activityHeading = uid('h');
  return h(
    'div',
    { class: 'view' },
    h('h1', { tabindex: -1 }, 'Wallets'),
    guide.element,
    // The wallet cards' h3 headings sit under an h2, as every other section's do (no skipped heading level).
    h('h2', { class: 'visually-hidden' }, 'Your wallets'),
    cards.element,
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': moveHeading },
        h('h2', { id: moveHeading }, 'Move money'),
        moveSlot,
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': addHeading },
        h('h2', { id: addHeading }, 'Add a wallet'),
        addWalletForm(async () => {
          await ctx.reloadWallets();
          await cards.loadGas().catch(() => {});
          walletsChanged();
        }),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': activityHeading },
      h('div', { class: 'section-head' }, h('h2', { id: activityHeading }, 'Activity'), refresh),
      activityStatus,
      activityAnnouncer,
      activity.element,
    ),
  );
}
