/** Wallets with their three balances, money movement (fund, mint, transfer, redeem) and the transaction list. */

import { ApiError, get, idempotencyKey, post, query } from '../api.ts';
import {
  copyButton,
  field,
  formatTime,
  h,
  onSubmit,
  replace,
  saveFile,
  shortHex,
  showError,
  showInfo,
  statusArea,
  statusBadge,
  txLink,
  uid,
} from '../dom.ts';
import { plainCode, plainError } from '../errors.ts';
import { AMOUNT_HINT, formatAmount, formatGas, parseAmountInput } from '../money.ts';
import {
  type Balance,
  type GasRecord,
  IN_FLIGHT,
  type Page,
  type Transaction,
  type Wallet,
} from '../types.ts';
import { type Ctx, walletName } from './context.ts';

const PAGE_SIZE = 10;
const FAST_POLL_MS = 4000;
const SLOW_POLL_MS = 15000;

export async function walletsView(ctx: Ctx): Promise<HTMLElement> {
  await ctx.reloadWallets().catch(() => {});
  const gas = new Map<string, GasRecord>();
  const revealed = new Map<string, { balance: Balance; at: Date }>();
  let transactions: Page<Transaction> = { items: [], page: 1, pageSize: PAGE_SIZE, total: 0 };
  let page = 1;
  let lastPoll = 0;

  const walletList = h('div', { class: 'wallet-grid' });
  const activity = h('div', { class: 'activity' });
  const activityStatus = statusArea();
  const moveSlot = h('div');

  // ---------------------------------------------------------------------------------------------- wallets
  /** Balance cells of each card, updated in place by the poll (so focus and reading position stay put). */
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
    const primary = wallet.isPrimary
      ? null
      : h(
          'button',
          {
            type: 'button',
            class: 'secondary small',
            'aria-label': `Make ${wallet.label} the primary wallet`,
          },
          'Make primary',
        );
    primary?.addEventListener('click', async () => {
      try {
        await post(`/wallets/${wallet.id}/primary`);
        await ctx.reloadWallets();
        walletsChanged();
      } catch (error) {
        showError(activityStatus, plainError(error));
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
        h('code', null, wallet.address),
        ' ',
        copyButton(wallet.address, 'Copy address', `Copy the address of ${wallet.label}`),
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

  function renderWallets(): void {
    if (ctx.wallets.length === 0) {
      replace(walletList, h('p', { class: 'empty' }, 'No wallets yet. Create one below to get started.'));
    } else {
      cells.clear();
      replace(walletList, ctx.wallets.map(walletCard));
    }
  }

  /** The wallet list changed (created, primary): rebuild the cards and the forms that list wallets. */
  function walletsChanged(): void {
    renderWallets();
    replace(moveSlot, moveMoneyForm());
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
      const { balances } = await get<{ balances: Balance[] }>(`/balances${query({ walletId: wallet.id })}`);
      const balance = balances[0];
      if (balance) revealed.set(wallet.id, { balance, at: new Date() });
      fillConfidential(wallet, cell, headingId, true);
    } catch (error) {
      button.disabled = false;
      button.textContent = 'Reveal';
      showError(activityStatus, plainError(error));
    }
  }

  async function loadGas(): Promise<void> {
    if (ctx.wallets.length === 0) return;
    const data = await get<{ wallets: GasRecord[] }>('/gas');
    for (const record of data.wallets) gas.set(record.walletId, record);
    for (const wallet of ctx.wallets) fillPublic(wallet);
  }

  function addWalletForm(): HTMLElement {
    const status = statusArea();
    const custodial = h('input', {
      type: 'radio',
      name: 'wallet-type',
      value: 'CUSTODIAL',
      checked: true,
      id: uid('wt'),
    });
    const external = h('input', { type: 'radio', name: 'wallet-type', value: 'EXTERNAL', id: uid('wt') });
    const label = h('input', { type: 'text', maxlength: 100, placeholder: 'e.g. Savings' });
    const address = h('input', {
      type: 'text',
      pattern: '0x[0-9a-fA-F]{40}',
      spellcheck: false,
      autocomplete: 'off',
      placeholder: '0x…',
    });
    const addressField = field(
      'Address to watch',
      address,
      'A 0x address you control elsewhere (watch-only).',
    );
    addressField.hidden = true;
    const submit = h('button', { type: 'submit' }, 'Create wallet');
    const sync = () => {
      addressField.hidden = !external.checked;
      address.required = external.checked;
      submit.textContent = external.checked ? 'Add watch-only wallet' : 'Create wallet';
    };
    custodial.addEventListener('change', sync);
    external.addEventListener('change', sync);
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Add a wallet' },
      h(
        'fieldset',
        null,
        h('legend', null, 'Kind of wallet'),
        h(
          'div',
          { class: 'choice' },
          custodial,
          h('label', { for: custodial.id }, 'Custodial (sealpay holds the key)'),
        ),
        h(
          'div',
          { class: 'choice' },
          external,
          h('label', { for: external.id }, 'Watch-only (an address you own)'),
        ),
      ),
      field('Label (optional)', label),
      addressField,
      submit,
      status,
    );
    onSubmit(form, submit, status, async () => {
      const body: Record<string, string> = { type: external.checked ? 'EXTERNAL' : 'CUSTODIAL' };
      if (label.value.trim()) body.label = label.value.trim();
      if (external.checked) body.address = address.value.trim();
      const { wallet } = await post<{ wallet: Wallet }>('/wallets', body);
      await ctx.reloadWallets();
      await loadGas().catch(() => {});
      walletsChanged();
      form.reset();
      sync();
      showInfo(status, `Wallet “${wallet.label}” created.`);
    });
    return form;
  }

  // ---------------------------------------------------------------------------------------------- money movement
  type Op = 'fund' | 'mint' | 'transfer' | 'redeem';
  const OPS: { op: Op; label: string; help: string }[] = [
    { op: 'fund', label: 'Fund', help: 'Sandbox faucet: test STABLE plus gas, into the wallet.' },
    { op: 'mint', label: 'Mint', help: 'Wrap public STABLE into confidential cSTABLE (1:1).' },
    {
      op: 'transfer',
      label: 'Transfer',
      help: 'Send confidential cSTABLE to an address; the amount stays sealed.',
    },
    { op: 'redeem', label: 'Redeem', help: 'Unwrap confidential cSTABLE back into public STABLE.' },
  ];

  function moveMoneyForm(): HTMLElement {
    if (ctx.wallets.length === 0) return h('p', { class: 'empty' }, 'Create a wallet first.');
    const status = statusArea();
    const ops = OPS.filter((o) => o.op !== 'fund' || ctx.network?.environment !== 'production');
    const radios = ops.map((o, i) =>
      h('input', { type: 'radio', name: 'op', value: o.op, id: uid('op'), checked: i === 0 }),
    );
    const helpText = h('p', { class: 'hint', id: uid('op-help') });
    const wallet = h(
      'select',
      null,
      ctx.wallets.map((w) =>
        h('option', { value: w.id, selected: w.isPrimary }, `${w.label} (${shortHex(w.address, 4)})`),
      ),
    );
    const amount = h('input', { type: 'text', inputmode: 'decimal', autocomplete: 'off', spellcheck: false });
    const amountField = field('Amount', amount, AMOUNT_HINT);
    const listId = uid('own-addresses');
    const to = h('input', {
      type: 'text',
      list: listId,
      spellcheck: false,
      autocomplete: 'off',
      pattern: '0x[0-9a-fA-F]{40}',
      placeholder: '0x…',
    });
    const toField = field('Recipient address', to, 'Any 0x address; your own wallets are suggested.');
    toField.append(
      h(
        'datalist',
        { id: listId },
        ctx.wallets.map((w) => h('option', { value: w.address }, w.label)),
      ),
    );
    const submit = h('button', { type: 'submit' }, 'Fund');
    const selected = (): Op => (radios.find((r) => r.checked)?.value as Op) ?? 'fund';
    const sync = () => {
      const op = selected();
      const meta = OPS.find((o) => o.op === op);
      helpText.textContent = meta?.help ?? '';
      submit.textContent = meta?.label ?? 'Send';
      toField.hidden = op !== 'transfer';
      to.required = op === 'transfer';
      amount.required = op !== 'fund';
      amount.placeholder = op === 'fund' ? 'default faucet amount' : '';
    };
    for (const radio of radios) radio.addEventListener('change', sync);
    sync();
    const form = h(
      'form',
      { class: 'stack', 'aria-label': 'Move money', novalidate: true },
      h(
        'fieldset',
        { 'aria-describedby': helpText.id },
        h('legend', null, 'Operation'),
        h(
          'div',
          { class: 'choices-row' },
          ops.map((o, i) =>
            h(
              'div',
              { class: 'choice' },
              radios[i] ?? null,
              h('label', { for: radios[i]?.id ?? '' }, o.label),
            ),
          ),
        ),
        helpText,
      ),
      field('Wallet', wallet),
      amountField,
      toField,
      submit,
      status,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      replace(status);
      const op = selected();
      const body: Record<string, string> = { walletId: wallet.value };
      if (amount.value.trim() || op !== 'fund') {
        const parsed = parseAmountInput(amount.value);
        if (!parsed) {
          showError(status, `The amount is not valid. ${AMOUNT_HINT}`);
          amount.focus();
          return;
        }
        body.amount = parsed;
      }
      if (op === 'transfer') {
        if (!/^0x[0-9a-fA-F]{40}$/.test(to.value.trim())) {
          showError(status, plainCode('invalid_recipient'));
          to.focus();
          return;
        }
        body.to = to.value.trim();
      }
      submit.disabled = true;
      try {
        const { transaction } = await post<{ transaction: Transaction }>(`/${op}`, body, {
          headers: idempotencyKey(),
        });
        showInfo(
          status,
          `${OPS.find((o) => o.op === op)?.label} of ${transaction.amount} ${transaction.token} queued. Follow it under Activity.`,
        );
        amount.value = '';
        page = 1;
        await refreshActivity();
      } catch (error) {
        showError(status, plainError(error));
      } finally {
        submit.disabled = false;
      }
    });
    return form;
  }

  // ---------------------------------------------------------------------------------------------- activity
  async function downloadReceipt(tx: Transaction, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const { filename, nota } = await get<{ filename: string; nota: string }>(`/transactions/${tx.id}/nota`);
      saveFile(filename, new Blob([nota], { type: 'text/plain' }));
      showInfo(activityStatus, `Receipt ${filename} saved.`);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'receipt_unavailable') {
        const retryable = (error.details as { retryable?: boolean } | undefined)?.retryable;
        showError(
          activityStatus,
          retryable
            ? 'No receipt yet: the transaction is still queued. Try again when it has a hash.'
            : 'This transaction failed before reaching the chain, so it has no receipt.',
        );
      } else {
        showError(activityStatus, plainError(error));
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
    const party = tx.counterparty ?? (tx.toAddress ? shortHex(tx.toAddress, 4) : null);
    return h(
      'tr',
      { 'data-tx-id': tx.id, 'data-status': tx.status },
      h('td', { 'data-label': 'When' }, formatTime(tx.createdAt)),
      h('td', { 'data-label': 'Type' }, tx.type),
      h('td', { 'data-label': 'Amount', class: 'num' }, `${formatAmount(tx.amount)} ${tx.token}`),
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
        party ? h('span', { class: 'muted' }, ` → ${party}`) : null,
      ),
      h('td', { 'data-label': 'Hash' }, hash),
      h('td', { 'data-label': 'Receipt' }, receipt ?? '—'),
    );
  }

  function renderActivity(): void {
    const pages = Math.max(1, Math.ceil(transactions.total / PAGE_SIZE));
    const prev = h('button', { type: 'button', class: 'secondary small', disabled: page <= 1 }, 'Newer');
    const next = h('button', { type: 'button', class: 'secondary small', disabled: page >= pages }, 'Older');
    prev.addEventListener('click', () => {
      page -= 1;
      void refreshActivity();
    });
    next.addEventListener('click', () => {
      page += 1;
      void refreshActivity();
    });
    const inFlight = transactions.items.some((t) => IN_FLIGHT.includes(t.status));
    // Keep keyboard focus on the same control across a refresh.
    const focused =
      document.activeElement instanceof HTMLElement && activity.contains(document.activeElement)
        ? document.activeElement
        : null;
    const focusRow = focused?.closest('tr')?.getAttribute('data-tx-id');
    const focusText = focused?.textContent;
    replace(
      activity,
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
      h(
        'div',
        { class: 'pager' },
        prev,
        h('span', null, `Page ${page} of ${pages}`),
        next,
        inFlight ? h('span', { class: 'muted live' }, 'Updating while operations are in progress…') : null,
      ),
    );
    if (focused) {
      const scope = focusRow ? activity.querySelector(`tr[data-tx-id="${CSS.escape(focusRow)}"]`) : activity;
      const again = [...(scope?.querySelectorAll<HTMLElement>('button, a') ?? [])].find(
        (e) => e.textContent === focusText,
      );
      again?.focus();
    }
  }

  async function refreshActivity(): Promise<void> {
    const before = new Map(transactions.items.map((t) => [t.id, t.status]));
    const [list] = await Promise.all([
      get<Page<Transaction>>(`/transactions${query({ page, pageSize: PAGE_SIZE })}`),
      loadGas().catch(() => {}),
    ]);
    const changed = JSON.stringify(list) !== JSON.stringify(transactions);
    transactions = list;
    lastPoll = Date.now();
    if (changed) renderActivity();
    // Balances shown decrypted go stale when one of their transactions completes: read them again.
    const settled = new Set(
      list.items
        .filter((t) => IN_FLIGHT.includes(before.get(t.id) ?? '') && !IN_FLIGHT.includes(t.status))
        .map((t) => t.walletId),
    );
    for (const walletId of settled) {
      if (revealed.has(walletId)) {
        const { balances } = await get<{ balances: Balance[] }>(`/balances${query({ walletId })}`);
        if (balances[0]) revealed.set(walletId, { balance: balances[0], at: new Date() });
        const wallet = ctx.wallets.find((w) => w.id === walletId);
        const cell = cells.get(walletId)?.confidential;
        const headingId = cell?.closest('article')?.getAttribute('aria-labelledby');
        if (wallet && cell && headingId) fillConfidential(wallet, cell, headingId);
      }
    }
  }

  const refresh = h('button', { type: 'button', class: 'secondary small' }, 'Refresh');
  refresh.addEventListener(
    'click',
    () => void refreshActivity().catch((e) => showError(activityStatus, plainError(e))),
  );

  await Promise.all([loadGas().catch(() => {}), refreshActivity().catch(() => {})]);
  walletsChanged();
  renderActivity();

  ctx.every(1000, async () => {
    const inFlight = transactions.items.some((t) => IN_FLIGHT.includes(t.status));
    const due = Date.now() - lastPoll >= (inFlight ? FAST_POLL_MS : SLOW_POLL_MS);
    if (!due) return;
    lastPoll = Date.now();
    try {
      await refreshActivity();
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
    walletList,
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
        addWalletForm(),
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': activityHeading },
      h('div', { class: 'section-head' }, h('h2', { id: activityHeading }, 'Activity'), refresh),
      activityStatus,
      activity,
    ),
  );
}
