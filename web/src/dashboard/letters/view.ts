/** Letters of value: create (escrow), list with status, PDF, claim code and QR, mail, void, tracking. */

import { get, query } from '../../api.ts';
import { h, pager, replace, showFailure, statusArea, uid } from '../../dom.ts';
import type { Letter, Page, Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { createForm } from './create-form.ts';
import { letterCard } from './letter-card.ts';
import type { LettersList } from './parts.ts';

const PAGE_SIZE = 20;
const POLL_MS = 10_000;

export async function lettersView(ctx: Ctx): Promise<HTMLElement> {
  await ctx.reloadWallets().catch(() => {});
  let page = 1;
  let letters: Page<Letter> = { items: [], page: 1, pageSize: PAGE_SIZE, total: 0, nextCursor: null };
  const cards = new Map<string, { json: string; element: HTMLElement }>();
  const element = h('div', { class: 'letter-list' });
  /** Escrow transaction id → the amount it moved (a confirmed transaction's amount never changes). */
  const escrowAmounts = new Map<string, string>();
  /** `letterId:key` of the disclosures the person opened. */
  const openDetails = new Set<string>();

  const list: LettersList = {
    status: statusArea(),
    refresh,
    async showNewest() {
      page = 1;
      await refresh();
    },
    async changed(letterId) {
      await refresh();
      // After an action rebuilt a card, keep keyboard focus on it (its heading).
      element.querySelector<HTMLElement>(`article[data-letter-id="${CSS.escape(letterId)}"] h3`)?.focus();
    },
    async rebuild() {
      cards.clear();
      render();
    },
    escrowAmount(letter) {
      return escrowAmounts.get(letter.escrow.transactionId) ?? null;
    },
    details(letterId, key, summary, ...content) {
      const id = `${letterId}:${key}`;
      const details = h('details', { open: openDetails.has(id) }, summary, ...content);
      details.addEventListener('toggle', () => {
        if (details.open) openDetails.add(id);
        else openDetails.delete(id);
      });
      return details;
    },
  };

  /** Reads the escrow amounts not known yet (the sender's own transactions), in parallel. */
  async function readEscrowAmounts(): Promise<void> {
    const missing = letters.items
      .map((letter) => letter.escrow.transactionId)
      .filter((id) => id && !escrowAmounts.has(id));
    await Promise.all(
      missing.map(async (id) => {
        const { transaction } = await get<{ transaction: Transaction }>(`/transactions/${id}`);
        if (transaction.amount !== null) escrowAmounts.set(id, transaction.amount);
      }),
    );
  }

  function render(): void {
    if (letters.items.length === 0) {
      replace(element, h('p', { class: 'empty' }, 'No letters yet.'));
      return;
    }
    const seen = new Set<string>();
    const elements = letters.items.map((letter) => {
      seen.add(letter.id);
      const json = `${JSON.stringify(letter)}|${list.escrowAmount(letter) ?? ''}`;
      const cached = cards.get(letter.id);
      if (cached && cached.json === json) return cached.element;
      const card = letterCard(ctx, list, letter);
      cards.set(letter.id, { json, element: card });
      return card;
    });
    for (const id of cards.keys()) if (!seen.has(id)) cards.delete(id);
    // Move the cards in place rather than rebuilding: unchanged cards keep open details and focus.
    const pages = pager({ page, pageSize: PAGE_SIZE, total: letters.total }, (to) => {
      page = to;
      void refresh();
    });
    const focused = document.activeElement;
    element.replaceChildren(...elements, pages);
    if (focused instanceof HTMLElement && element.contains(focused)) focused.focus();
  }

  async function refresh(): Promise<void> {
    letters = await get<Page<Letter>>(`/transfer/letter${query({ page, pageSize: PAGE_SIZE })}`);
    render();
    // The cards show "…" for an amount until it is read; a failure here leaves them so until the next refresh.
    const before = escrowAmounts.size;
    await readEscrowAmounts().catch(() => {});
    if (escrowAmounts.size !== before) render();
  }

  try {
    await refresh();
  } catch (error) {
    showFailure(list.status, error);
  }
  ctx.every(POLL_MS, async () => {
    try {
      await refresh();
    } catch (error) {
      showFailure(list.status, error);
    }
  });

  const createHeading = uid('h');
  const listHeading = uid('h');
  const newLetter = h(
    'section',
    { class: 'card', 'aria-labelledby': createHeading },
    h('h2', { id: createHeading, tabindex: -1 }, 'New letter'),
    createForm(ctx, list),
  );
  // The form comes after the list (below, on a phone), so after every control of every card: this button, first
  // in tab order and on screen, takes a person there in one step.
  const toForm = h('button', { type: 'button', class: 'secondary new-letter' }, 'New letter');
  toForm.addEventListener('click', () => {
    const first =
      newLetter.querySelector<HTMLElement>('select, input, textarea') ?? newLetter.querySelector('h2');
    first?.scrollIntoView({ block: 'center' });
    first?.focus();
  });
  return h(
    'div',
    { class: 'view' },
    h('h1', { tabindex: -1 }, 'Letters of value'),
    h(
      'p',
      { class: 'lead' },
      'Escrow an amount in the vault, then print and mail the letter or hand over its code. The recipient claims it into their own wallet. Until then the memo stays sealed, and only you see the amount.',
    ),
    h('p', { class: 'actions' }, toForm),
    // The list first (in reading order and on screen): on a phone, a person who comes back finds their letters
    // before a long form.
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { 'aria-labelledby': listHeading, class: 'list-section' },
        h('h2', { id: listHeading }, 'Your letters'),
        list.status,
        element,
      ),
      newLetter,
    ),
  );
}
