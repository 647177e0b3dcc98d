/**
 * The first-run guide on the Wallets view: three steps from an empty account to money sent (fund, mint, send),
 * each ticked off as the account's own transactions show it done. Gone once all three are done, or hidden by the
 * person (remembered in this browser, per account).
 */

import { get, query } from '../../api.ts';
import { h, replace, uid } from '../../dom.ts';
import type { Page, Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';

interface Step {
  title: string;
  how: string;
  /** Transaction filters any of which shows the step done. */
  doneBy: Record<string, string>[];
}

const STEPS: Step[] = [
  {
    title: 'Fund a wallet',
    how: 'Create a wallet under “Add a wallet” if you have none, then choose Fund under “Move money” to get test STABLE and gas.',
    doneBy: [{ type: 'FUND' }],
  },
  {
    title: 'Mint confidential cSTABLE',
    how: 'Choose Mint: public STABLE becomes cSTABLE, whose balances and amounts stay sealed.',
    doneBy: [{ type: 'MINT' }],
  },
  {
    title: 'Send it',
    how: 'Choose Transfer to pay an address, or send a letter of value from Letters.',
    doneBy: [{ type: 'TRANSFER', direction: 'out' }, { type: 'LETTER_ESCROW' }],
  },
];

const hiddenKey = (ctx: Ctx) => `sealpay:first-run-hidden:${ctx.user.id}`;

async function stepsDone(): Promise<boolean[]> {
  return await Promise.all(
    STEPS.map(async (step) => {
      for (const filter of step.doneBy) {
        const page = await get<Page<Transaction>>(`/transactions${query({ ...filter, pageSize: 1 })}`);
        if (page.items.length > 0) return true;
      }
      return false;
    }),
  );
}

/** The guide's slot: empty when the account needs no guide. `refresh` reads the account's progress again. */
export function firstRunGuide(ctx: Ctx): { element: HTMLElement; refresh(): Promise<void> } {
  const element = h('div');
  let finished = localStorage.getItem(hiddenKey(ctx)) === '1';
  /** The steps shown as done, so that an unchanged guide is not rebuilt (keyboard focus stays on its button). */
  let shown = '';

  async function refresh(): Promise<void> {
    if (finished) return;
    const done = await stepsDone();
    if (done.every(Boolean)) {
      finished = true;
      replace(element);
      return;
    }
    if (done.join() === shown) return;
    shown = done.join();
    const headingId = uid('h');
    const hide = h('button', { type: 'button', class: 'secondary small' }, 'Hide this guide');
    hide.addEventListener('click', () => {
      finished = true;
      localStorage.setItem(hiddenKey(ctx), '1');
      replace(element);
      document.querySelector<HTMLElement>('main h1')?.focus();
    });
    replace(
      element,
      h(
        'section',
        { class: 'card first-run', 'aria-labelledby': headingId },
        h('h2', { id: headingId }, 'Getting started: fund, mint, send'),
        h(
          'ol',
          null,
          STEPS.map((step, i) =>
            h(
              'li',
              { class: done[i] ? 'done' : null },
              h('strong', null, step.title),
              done[i] ? ' — done.' : [': ', step.how],
            ),
          ),
        ),
        hide,
      ),
    );
  }

  return { element, refresh };
}
