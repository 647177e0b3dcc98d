/**
 * Money movement: fund (sandbox), mint, transfer and redeem from one of the caller's wallets. The form shows what
 * the wallet can spend and checks the amount against it before sending; each submission gets a live status line.
 * A request that does not answer in time is checked by sending it again with the same Idempotency-Key, which the
 * service answers once: it cannot pay twice.
 */

import { ApiError, get, isServiceTrouble, newIdempotencyKey, post, query } from '../../api.ts';
import {
  enableAgain,
  field,
  h,
  replace,
  shortHex,
  showError,
  showFailure,
  statusArea,
  uid,
} from '../../dom.ts';
import { plainCode } from '../../errors.ts';
import {
  AMOUNT_HINT,
  compareAmounts,
  formatAmount,
  parseAmountInput,
  subtractAmount,
  sumAmounts,
} from '../../money.ts';
import { spendingOnItsWay } from '../../transactions.ts';
import type { Page, Transaction } from '../../types.ts';
import type { Ctx } from '../context.ts';
import { type StatusLine, statusLines } from './operation-status.ts';

type Op = 'fund' | 'mint' | 'transfer' | 'redeem';
const OPS: { op: Op; label: string; verb: string; help: string }[] = [
  { op: 'fund', label: 'Fund', verb: 'fund', help: 'Sandbox faucet: test STABLE plus gas, into the wallet.' },
  { op: 'mint', label: 'Mint', verb: 'mint', help: 'Wrap public STABLE into confidential cSTABLE (1:1).' },
  {
    op: 'transfer',
    label: 'Transfer',
    verb: 'transfer',
    help: 'Send confidential cSTABLE to an address; the amount stays sealed.',
  },
  {
    op: 'redeem',
    label: 'Redeem',
    verb: 'redeem',
    help: 'Unwrap confidential cSTABLE back into public STABLE.',
  },
];

/** The sandbox faucet's limit per account over a rolling 24 hours (the interface's). */
const FAUCET_CAP = '1000';
/** A money movement normally answers within a second: past this, the app checks whether it went through. */
export const SUBMIT_TIMEOUT_MS = 10_000;
/** While the service does not answer, the app checks again by itself: after 4 s, 8 s, 16 s… at most every 30 s. */
export function recheckDelayMs(recheck: number): number {
  return Math.min(30_000, 4_000 * 2 ** recheck);
}

export interface MoveMoneyHooks {
  /** The public STABLE of a wallet as last read (`GET /gas`), or null when not known yet. */
  publicBalance(walletId: string): string | null;
  /** The decrypted cSTABLE of a wallet as the wallet cards hold it (undefined: sealed; null: watch-only). */
  confidentialBalance(walletId: string): string | null | undefined;
  /** Reads a wallet's public or confidential balance now (the confidential one shows on its card too). */
  readBalance(walletId: string, kind: 'public' | 'confidential'): Promise<void>;
  /** An operation was queued (the view shows it in the activity list). */
  queued(): Promise<void>;
  /** A submitted operation ended, or the service found a balance lower than shown: read the wallet's again. */
  stale(walletId: string): Promise<void>;
}

export interface MoveMoneyForm {
  readonly element: HTMLElement;
  /** Shows the selected wallet's available balance again (after balances were read anew), with what is on its way. */
  refreshAvailable(): Promise<void>;
}

/** What a wallet has on its way out (QUEUED or PENDING), per balance it spends: not available to spend again. */
interface OnItsWay {
  public: string;
  confidential: string;
}

/** Rows of one status read at once: more than this on their way from one wallet is beyond any form's use. */
const ON_ITS_WAY_PAGE = 100;

/** The wallet's outgoing money still on its way (its QUEUED and PENDING transfers, redeems, escrows and mints). */
async function readOnItsWay(walletId: string): Promise<OnItsWay> {
  const pages = await Promise.all(
    ['QUEUED', 'PENDING'].map((status) =>
      get<Page<Transaction>>(`/transactions${query({ walletId, status, pageSize: ON_ITS_WAY_PAGE })}`),
    ),
  );
  const amounts: Record<keyof OnItsWay, string[]> = { public: [], confidential: [] };
  for (const tx of pages.flatMap((page) => page.items)) {
    const balance = spendingOnItsWay(tx);
    if (balance && tx.amount !== null) amounts[balance].push(tx.amount);
  }
  return { public: sumAmounts(...amounts.public), confidential: sumAmounts(...amounts.confidential) };
}

export function moveMoneyForm(ctx: Ctx, hooks: MoveMoneyHooks): MoveMoneyForm {
  if (ctx.wallets.length === 0) {
    return { element: h('p', { class: 'empty' }, 'Create a wallet first.'), async refreshAvailable() {} };
  }
  const status = statusArea();
  const lines = statusLines();
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
  const available = h('p', { class: 'hint available', id: uid('available'), 'aria-live': 'polite' });
  amountField.append(available);
  amount.setAttribute('aria-describedby', `${amount.getAttribute('aria-describedby')} ${available.id}`);
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
  const meta = (op: Op) => OPS.find((o) => o.op === op) ?? { op, label: op, verb: op, help: '' };

  /** The wallet whose confidential balance is being read (one read at a time). */
  let reading: string | null = null;
  /** Per wallet, its outgoing money on its way as last read (none yet: not known). */
  const onItsWay = new Map<string, OnItsWay>();

  /** Reads what `walletId` has on its way now; a failed read keeps the last one (the service's trouble shows elsewhere). */
  async function readWhatIsOnItsWay(walletId: string): Promise<void> {
    onItsWay.set(walletId, await readOnItsWay(walletId));
  }

  /**
   * What the selected wallet can spend on `op`: its balance less what is already on its way out of it, as decimal
   * strings, or null when not known.
   */
  function availableFor(
    op: Op,
  ): { amount: string; token: string; holds: string; onItsWay: string | null } | null {
    if (op === 'fund') return { amount: FAUCET_CAP, token: 'STABLE', holds: FAUCET_CAP, onItsWay: null };
    const kind = op === 'mint' ? 'public' : 'confidential';
    const balance =
      kind === 'public' ? hooks.publicBalance(wallet.value) : hooks.confidentialBalance(wallet.value);
    if (balance === undefined || balance === null) return null;
    const away = onItsWay.get(wallet.value)?.[kind] ?? null;
    const moving = away !== null && compareAmounts(away, '0') > 0 ? away : null;
    return {
      amount: moving ? subtractAmount(balance, moving) : balance,
      token: kind === 'public' ? 'STABLE' : 'cSTABLE',
      holds: balance,
      onItsWay: moving,
    };
  }

  /** The balance `op` spends and what is on its way out of it, read now (either may have changed meanwhile). */
  async function readFor(op: Op, walletId: string): Promise<void> {
    if (op === 'fund') return;
    await Promise.all([
      hooks.readBalance(walletId, op === 'mint' ? 'public' : 'confidential'),
      readWhatIsOnItsWay(walletId),
    ]);
  }

  /** The available line is a live region: it changes (and is announced) only when its words do. */
  function say(text: string): void {
    if (available.textContent !== text) available.textContent = text;
  }

  function showAvailable(): void {
    const op = selected();
    if (op === 'fund') {
      say(`The sandbox faucet gives up to ${formatAmount(FAUCET_CAP)} STABLE per account in 24 hours.`);
      return;
    }
    const known = availableFor(op);
    if (!onItsWay.has(wallet.value)) void refreshOnItsWay(wallet.value);
    if (known) {
      say(
        known.onItsWay
          ? `Available: ${formatAmount(known.amount)} ${known.token} (the wallet holds ${formatAmount(known.holds)}, of which ${formatAmount(known.onItsWay)} is already on its way)`
          : `Available: ${formatAmount(known.amount)} ${known.token}`,
      );
      available.setAttribute('data-available', known.amount);
      return;
    }
    available.removeAttribute('data-available');
    if (op === 'mint') {
      say('Available: reading the balance…');
      return;
    }
    if (hooks.confidentialBalance(wallet.value) === null) {
      say('Available: only the wallet’s owner can decrypt this balance.');
      return;
    }
    say('Available: decrypting the confidential balance…');
    const walletId = wallet.value;
    if (reading === walletId) return;
    reading = walletId;
    void hooks
      .readBalance(walletId, 'confidential')
      .catch(() => {
        say('Available: the confidential balance could not be read just now.');
      })
      .finally(() => {
        reading = null;
        if (wallet.value === walletId && hooks.confidentialBalance(walletId) !== undefined) showAvailable();
      });
  }

  /** Reads what `walletId` has on its way, then shows the available balance again if it is still the one selected. */
  async function refreshOnItsWay(walletId: string): Promise<void> {
    await readWhatIsOnItsWay(walletId).catch(() => {});
    if (wallet.value === walletId && onItsWay.has(walletId)) showAvailable();
  }

  const sync = () => {
    const op = selected();
    const details = meta(op);
    helpText.textContent = details.help;
    submit.textContent = details.label;
    toField.hidden = op !== 'transfer';
    to.required = op === 'transfer';
    amount.required = op !== 'fund';
    amount.placeholder = op === 'fund' ? 'default faucet amount' : '';
    showAvailable();
  };
  for (const radio of radios) radio.addEventListener('change', sync);
  wallet.addEventListener('change', sync);
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
          h('div', { class: 'choice' }, radios[i] ?? null, h('label', { for: radios[i]?.id ?? '' }, o.label)),
        ),
      ),
      helpText,
    ),
    field('Wallet', wallet),
    amountField,
    toField,
    submit,
    status,
    lines.element,
  );

  /**
   * The submission whose answer has not come yet: sending the same details again reuses its Idempotency-Key, so
   * the service answers them once. Cleared by any definite answer.
   */
  let unanswered: { fingerprint: string; key: string } | null = null;

  function refused(message: string, focus: HTMLElement): void {
    showError(status, message);
    focus.focus();
  }

  /** A balance of `walletId` went stale (an operation's status changed, or the service found less): read it again. */
  async function reread(walletId: string): Promise<void> {
    await hooks.stale(walletId).catch(() => {});
    if (wallet.value === walletId) showAvailable();
  }

  /**
   * Sends until the service answers, and says whether it was queued. Without an answer it asks again at once, then
   * by itself at growing intervals (`recheck`, see `recheckDelayMs`) until the service answers or the line is gone;
   * "Try again" asks now. The same Idempotency-Key throughout: the service answers it once.
   */
  async function send(
    op: Op,
    body: Record<string, string>,
    key: string,
    line: StatusLine,
    recheck = 0,
  ): Promise<boolean> {
    const walletId = body.walletId ?? '';
    const details = meta(op);
    for (let attempt = recheck > 0 ? 2 : 1; ; attempt += 1) {
      try {
        const { transaction } = await post<{ transaction: Transaction }>(`/${op}`, body, {
          headers: { 'Idempotency-Key': key },
          timeoutMs: SUBMIT_TIMEOUT_MS,
        });
        if (unanswered?.key === key) unanswered = null;
        line.follow(transaction, () => void reread(walletId));
        await hooks.queued();
        return true;
      } catch (error) {
        const noAnswer =
          error instanceof ApiError && (error.code === 'timeout' || error.code === 'network_error');
        if (noAnswer && attempt === 1) {
          // Ask again with the same key: the service returns the operation if the first request reached it.
          line.checking('no answer yet. Checking whether it went through…');
          continue;
        }
        if (noAnswer) {
          const again = h('button', { type: 'button', class: 'secondary small' }, 'Try again');
          const timer = window.setTimeout(() => {
            if (line.element.isConnected) void send(op, body, key, line, recheck + 1);
          }, recheckDelayMs(recheck));
          again.addEventListener('click', () => {
            window.clearTimeout(timer);
            line.checking('checking whether it went through…');
            void send(op, body, key, line, recheck + 1);
          });
          line.checking(
            `the service is not answering, so we cannot tell yet whether it went through; we keep checking. Trying again cannot ${details.verb} twice.`,
            again,
          );
          return false;
        }
        // A definite answer: the service refused it (the reason is shown as it gave it) or failed outright.
        if (!isServiceTrouble(error) && unanswered?.key === key) unanswered = null;
        line.remove();
        showFailure(status, error);
        // The balance shown was stale: read it again.
        if (error instanceof ApiError && error.code === 'insufficient_balance') await reread(walletId);
        amount.focus();
        return false;
      }
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    replace(status);
    const op = selected();
    const details = meta(op);
    const body: Record<string, string> = { walletId: wallet.value };
    if (amount.value.trim() || op !== 'fund') {
      const parsed = parseAmountInput(amount.value);
      if (!parsed) return refused(`The amount is not valid. ${AMOUNT_HINT}`, amount);
      // What is on its way out of the wallet now (an operation just queued here or elsewhere) is not available.
      if (op !== 'fund') {
        submit.disabled = true;
        await readWhatIsOnItsWay(wallet.value).catch(() => {});
        submit.disabled = false;
      }
      let limit = availableFor(op);
      if (op !== 'fund' && (!limit || compareAmounts(parsed, limit.amount) > 0)) {
        // Not read yet, or perhaps stale (an operation just ended): judged on the balance as it is now.
        submit.disabled = true;
        await readFor(op, wallet.value).catch(() => {});
        submit.disabled = false;
        showAvailable();
        limit = availableFor(op);
      }
      if (limit && compareAmounts(parsed, limit.amount) > 0) {
        return refused(
          op === 'fund'
            ? `The sandbox faucet gives at most ${formatAmount(FAUCET_CAP)} STABLE per account in 24 hours: ask for less.`
            : limit.onItsWay
              ? `The wallet holds ${formatAmount(limit.holds)} ${limit.token}, of which ${formatAmount(limit.onItsWay)} is already on its way: ${formatAmount(limit.amount)} is available, too little to ${details.verb} ${formatAmount(parsed)}.`
              : `The wallet holds ${formatAmount(limit.amount)} ${limit.token}: too little to ${details.verb} ${formatAmount(parsed)}.`,
          amount,
        );
      }
      body.amount = parsed;
    }
    if (op === 'transfer') {
      if (!/^0x[0-9a-fA-F]{40}$/.test(to.value.trim())) return refused(plainCode('invalid_recipient'), to);
      body.to = to.value.trim();
    }
    const fingerprint = JSON.stringify([op, body]);
    if (unanswered?.fingerprint !== fingerprint) unanswered = { fingerprint, key: newIdempotencyKey() };
    const { key } = unanswered;
    const what = `${details.label} of ${body.amount ? formatAmount(body.amount) : 'the default amount'} ${op === 'fund' || op === 'mint' ? 'STABLE' : 'cSTABLE'}`;
    const line = lines.add(what);
    submit.disabled = true;
    try {
      if (await send(op, body, key, line)) amount.value = '';
    } finally {
      enableAgain(submit);
    }
  });
  return {
    element: form,
    async refreshAvailable() {
      showAvailable();
      if (selected() !== 'fund') await refreshOnItsWay(wallet.value);
    },
  };
}
