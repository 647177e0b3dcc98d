/** Wallets with their three balances, money movement (fund, mint, transfer, redeem) and the transaction list. */

import { h, replace, showError, statusArea, uid } from '../../dom.ts';
import { plainError } from '../../errors.ts';
import type { Ctx } from '../context.ts';
import { activityList } from './activity.ts';
import { addWalletForm } from './add-wallet.ts';
import { walletCards } from './cards.ts';
import { firstRunGuide } from './first-run.ts';
import { moveMoneyForm } from './move-money.ts';

const FAST_POLL_MS = 4000;
const SLOW_POLL_MS = 15000;

export async function walletsView(ctx: Ctx): Promise<HTMLElement> {
  await ctx.reloadWallets().catch(() => {});
  const activityStatus = statusArea();
  const moveSlot = h('div');

  /** The wallet list changed (created, primary): rebuild the cards and the forms that list wallets. */
  function walletsChanged(): void {
    cards.render();
    replace(
      moveSlot,
      moveMoneyForm(ctx, () => activity.showNewest()),
    );
  }

  const cards = walletCards(ctx, activityStatus, walletsChanged);
  const activity = activityList(ctx, activityStatus, {
    alongside: () => cards.loadGas(),
    // Balances shown decrypted go stale when one of their transactions completes: read them again.
    settled: (walletIds) => cards.refreshRevealed(walletIds),
  });

  const guide = firstRunGuide(ctx);
  await guide.refresh().catch(() => {});
  // Ticks the guide's steps off as they are done (it stops asking once finished or hidden).
  ctx.every(5000, () => guide.refresh().catch(() => {}));

  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh');
  refresh.addEventListener(
    'click',
    () => void activity.refresh().catch((e) => showError(activityStatus, plainError(e))),
  );

  await Promise.all([cards.loadGas().catch(() => {}), activity.refresh().catch(() => {})]);
  walletsChanged();
  activity.render();

  ctx.every(1000, async () => {
    const due = Date.now() - activity.polledAt >= (activity.inFlight() ? FAST_POLL_MS : SLOW_POLL_MS);
    if (!due) return;
    try {
      await activity.poll();
    } catch (error) {
      showError(activityStatus, plainError(error));
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
      activity.element,
    ),
  );
}
