/** The wallet cards: address, gas and public balances (polled), and the confidential balance revealed on demand. */

import { get, post, query } from '../../api.ts';
import { copyButton, h, labelledButton, middleTruncated, replace, showFailure, uid } from '../../dom.ts';
import { formatAmount, formatGas } from '../../money.ts';
import type { Balance, GasRecord, Wallet } from '../../types.ts';
import type { Ctx } from '../context.ts';

export interface WalletCards {
  readonly element: HTMLElement;
  /** Rebuilds every card from `ctx.wallets`. */
  render(): void;
  /** Reads `GET /gas` and updates the public balances in place (focus and reading position stay put). */
  loadGas(): Promise<void>;
  /** Decrypts again the revealed balances of `walletIds` (one of their transactions completed). */
  refreshRevealed(walletIds: Iterable<string>): Promise<void>;
  /** The public STABLE of a wallet as last read, or null before the first read. */
  publicBalance(walletId: string): string | null;
  /**
   * The confidential cSTABLE of a wallet as last decrypted: undefined while it is sealed (never revealed), null
   * when only its owner can decrypt it (watch-only).
   */
  confidentialBalance(walletId: string): string | null | undefined;
  /** Decrypts a wallet's confidential balance (now), and shows it on its card too: the card and the forms agree. */
  revealBalance(walletId: string): Promise<void>;
}

/**
 * `status` shows what fails; `walletsChanged` runs when the list changed here (a new primary), so the forms that
 * list wallets follow.
 */
export function walletCards(ctx: Ctx, status: HTMLElement, walletsChanged: () => void): WalletCards {
  const element = h('div', { class: 'wallet-grid' });
  const gas = new Map<string, GasRecord>();
  const revealed = new Map<string, { balance: Balance; at: Date }>();
  /** Balance cells of each card, updated in place by the poll. */
  const cells = new Map<string, { gas: HTMLElement; public: HTMLElement; confidential: HTMLElement }>();

  function fillConfidential(wallet: Wallet, cell: HTMLElement, headingId: string, focus = false): void {
    const secret = revealed.get(wallet.id);
    const button = h(
      'button',
      {
        type: 'button',
        class: 'secondary small',
        'aria-label': `${secret ? 'Refresh' : 'Reveal'} the confidential balance of ${wallet.label}`,
      },
      secret ? 'Refresh' : 'Reveal',
    );
    button.addEventListener('click', () => void reveal(wallet, button, cell, headingId));
    if (secret) {
      const amount = secret.balance.confidential.amount;
      replace(
        cell,
        amount === null
          ? h('span', null, 'encrypted (watch-only: only its owner can decrypt)')
          : h('span', { class: 'amount' }, `${formatAmount(amount)} ${secret.balance.confidential.token}`),
        ' ',
        h('span', { class: 'muted' }, `as of ${secret.at.toLocaleTimeString()}`),
        ' ',
        button,
      );
    } else {
      replace(cell, h('span', { class: 'sealed' }, 'sealed'), ' ', button);
    }
    if (focus) button.focus();
  }

  function fillPublic(wallet: Wallet): void {
    const cell = cells.get(wallet.id);
    const record = gas.get(wallet.id);
    if (!cell || !record) return;
    cell.gas.textContent = `${formatGas(record.eth.amount)} ETH`;
    cell.gas.title = `${record.eth.amount} ETH`;
    cell.public.textContent = `${formatAmount(record.normal.amount)} ${record.normal.token}`;
  }

  /** Reads (decrypts) a wallet's balances into `revealed`. */
  async function decrypt(walletId: string): Promise<void> {
    const { balances } = await get<{ balances: Balance[] }>(`/balances${query({ walletId })}`);
    if (balances[0]) revealed.set(walletId, { balance: balances[0], at: new Date() });
  }

  /** Shows a wallet's revealed balance on its card again (in place; focus stays where it is). */
  function refill(walletId: string): void {
    const wallet = ctx.wallets.find((w) => w.id === walletId);
    const cell = cells.get(walletId)?.confidential;
    const headingId = cell?.closest('article')?.getAttribute('aria-labelledby');
    if (wallet && cell && headingId) fillConfidential(wallet, cell, headingId);
  }

  async function reveal(
    wallet: Wallet,
    button: HTMLButtonElement,
    cell: HTMLElement,
    headingId: string,
  ): Promise<void> {
    button.disabled = true;
    button.textContent = 'Decrypting…';
    try {
      await decrypt(wallet.id);
      fillConfidential(wallet, cell, headingId, true);
    } catch (error) {
      button.disabled = false;
      button.textContent = 'Reveal';
      showFailure(status, error);
    }
  }

  function walletCard(wallet: Wallet): HTMLElement {
    const headingId = uid('wallet');
    const row = {
      gas: h('dd', { class: 'gas' }, '…'),
      public: h('dd', { class: 'public' }, '…'),
      confidential: h('dd', { class: 'confidential' }),
    };
    cells.set(wallet.id, row);
    fillPublic(wallet);
    fillConfidential(wallet, row.confidential, headingId);
    // Its name starts with what it shows (WCAG 2.5.3, label in name), the wallet named after it for screen readers.
    const primary = wallet.isPrimary
      ? null
      : labelledButton('Make primary', `(${wallet.label})`, { class: 'secondary small' });
    primary?.addEventListener('click', async () => {
      try {
        await post(`/wallets/${wallet.id}/primary`);
        await ctx.reloadWallets();
        walletsChanged();
      } catch (error) {
        showFailure(status, error);
      }
    });
    return h(
      'article',
      { class: 'card wallet', 'aria-labelledby': headingId, 'data-wallet-id': wallet.id },
      h(
        'h3',
        { id: headingId },
        wallet.label,
        ' ',
        wallet.isPrimary ? h('span', { class: 'badge' }, 'Primary') : null,
        ' ',
        h('span', { class: 'badge muted-badge' }, wallet.type === 'CUSTODIAL' ? 'Custodial' : 'Watch-only'),
      ),
      h(
        'p',
        { class: 'address' },
        middleTruncated(wallet.address),
        ' ',
        copyButton(wallet.address, 'Copy address', `of ${wallet.label}`),
      ),
      h(
        'dl',
        { class: 'balances' },
        h('dt', null, 'Gas'),
        row.gas,
        h('dt', null, 'Public'),
        row.public,
        h('dt', null, 'Confidential'),
        row.confidential,
      ),
      primary,
    );
  }

  return {
    element,
    publicBalance: (walletId) => gas.get(walletId)?.normal.amount ?? null,
    render() {
      if (ctx.wallets.length === 0) {
        replace(element, h('p', { class: 'empty' }, 'No wallets yet. Create one below to get started.'));
      } else {
        cells.clear();
        replace(element, ctx.wallets.map(walletCard));
      }
    },
    async loadGas() {
      if (ctx.wallets.length === 0) return;
      const data = await get<{ wallets: GasRecord[] }>('/gas');
      for (const record of data.wallets) gas.set(record.walletId, record);
      for (const wallet of ctx.wallets) fillPublic(wallet);
    },
    async refreshRevealed(walletIds) {
      for (const walletId of walletIds) {
        if (!revealed.has(walletId)) continue;
        await decrypt(walletId);
        refill(walletId);
      }
    },
    confidentialBalance(walletId) {
      const secret = revealed.get(walletId);
      return secret ? secret.balance.confidential.amount : undefined;
    },
    async revealBalance(walletId) {
      await decrypt(walletId);
      refill(walletId);
    },
  };
}
