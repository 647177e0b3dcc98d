/**
 * The public claim page at `/claim#CODE`: preview of the letter, sign up or log in, pick a wallet or "a new wallet"
 * (made as part of the claim; a new person without wallets claims straight after signing up), claim (blocks up to
 * ~20 s), then the revealed amount, memo and claim transaction. A claimed letter offers nothing to claim with: its
 * claimant sees their claim (`GET /transfer/letter/claim`), anyone else that it has been claimed.
 */

import { ApiError, get, onSessionLost, post, query } from '../api.ts';
import { authPanel } from '../auth.ts';
import { networkBanner, bannerSlot as newBannerSlot } from '../banner.ts';
import {
  enableAgain,
  field,
  h,
  installSkipLink,
  replace,
  shortHex,
  showError,
  statusArea,
  uid,
} from '../dom.ts';
import { plainError } from '../errors.ts';
import { longWait } from '../progress.ts';
import type { Letter, LetterPreview, Page, Transaction, User, Wallet } from '../types.ts';
import { previewCard, resultCard } from './cards.ts';

const STORAGE_KEY = 'sealpay.claimCode';
const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{28}$/;

/** Upper-cases, drops separators and maps the look-alikes Crockford base32 allows (I, L → 1; O → 0). */
export function normalizeCode(raw: string): string {
  return raw
    .toUpperCase()
    .replace(/[\s-]+/g, '')
    .replace(/[IL]/g, '1')
    .replace(/O/g, '0');
}

function groupCode(code: string): string {
  return code.match(/.{1,4}/g)?.join('-') ?? code;
}

const app = document.getElementById('app') as HTMLElement;
const bannerSlot = newBannerSlot();
const main = h('main', { id: 'main', tabindex: -1 });
const previewSlot = h('div');
const stepSlot = h('div');
const status = statusArea();
/** The page's state, in one place: the code being claimed, its letter, the person signed in. */
const state = {
  /** The claim code, normalized (uppercase, no dashes). */
  code: '',
  preview: null as LetterPreview | null,
  user: null as User | null,
  /** A wallet this page created for a claim that then failed: a retry claims into it rather than making another. */
  createdForClaim: null as Wallet | null,
};

function renderPreview(p: LetterPreview): void {
  replace(previewSlot, previewCard(p, groupCode(state.code)));
}

/**
 * After a step replaced the control that had keyboard focus (focus then falls to the page's body): focus goes to the
 * new content's heading, the letter's preview first, else the step's, else the page's.
 */
function focusNewContent(): void {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  const heading =
    previewSlot.querySelector<HTMLElement>('h2') ??
    stepSlot.querySelector<HTMLElement>('h2') ??
    main.querySelector<HTMLElement>('h1');
  if (!heading) return;
  if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  heading.focus();
}

/** Keyboard focus on a step's heading (it is new content: a screen reader reads on from there). */
function focusHeading(step: HTMLElement): void {
  const heading = step.querySelector<HTMLElement>('h2');
  if (!heading) return;
  heading.setAttribute('tabindex', '-1');
  heading.focus();
}

// ------------------------------------------------------------------------------------------------- steps
/** The code form; after a refused look-up, with the reason and the code as typed (one wrong character to fix). */
function codeEntry(message?: string, typed = ''): void {
  const input = h('input', {
    type: 'text',
    autocomplete: 'off',
    spellcheck: false,
    autocapitalize: 'characters',
    required: true,
    maxlength: 64,
    class: 'code-input',
    placeholder: 'XXXX-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX',
    value: typed,
  });
  const submit = h('button', { type: 'submit' }, 'Look up letter');
  const form = h(
    'form',
    { class: 'card stack', 'aria-label': 'Enter a claim code' },
    h('h2', null, 'Enter your claim code'),
    field('Claim code', input, '28 letters and digits, printed on the letter in 7 groups of 4.'),
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    await lookUp(input.value);
    focusNewContent();
  });
  replace(previewSlot);
  replace(stepSlot, form);
  if (message) showError(status, message);
  input.focus();
  input.setSelectionRange(typed.length, typed.length);
}

async function lookUp(raw: string): Promise<void> {
  replace(status);
  const normalized = normalizeCode(raw);
  if (!CROCKFORD.test(normalized)) {
    codeEntry(
      plainError(new ApiError({ status: 400, code: 'invalid_claim_code', message: 'Invalid claim code.' })),
      raw,
    );
    return;
  }
  state.code = normalized;
  sessionStorage.setItem(STORAGE_KEY, state.code);
  try {
    await readPreview();
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.code === 'letter_not_found' || error.code === 'invalid_claim_code')
    ) {
      sessionStorage.removeItem(STORAGE_KEY);
      codeEntry(plainError(error), raw);
    } else {
      replace(stepSlot);
      showError(status, plainError(error));
    }
    return;
  }
  if (!state.preview) return;
  renderPreview(state.preview);
  const canProceed =
    state.preview.claimable || state.preview.status === 'CLAIMING' || state.preview.status === 'CLAIMED';
  if (!canProceed) {
    replace(
      stepSlot,
      h(
        'p',
        { class: 'card' },
        state.preview.status === 'EXPIRED'
          ? plainError(new ApiError({ status: 410, code: 'letter_expired', message: '' }))
          : plainError(new ApiError({ status: 409, code: 'letter_not_claimable', message: '' })),
      ),
    );
    return;
  }
  await nextStep();
}

/** Reads the letter's public preview into the page's state (its status changes as it is claimed). */
async function readPreview(): Promise<LetterPreview> {
  const { letter } = await get<{ letter: LetterPreview }>(
    `/transfer/letter/preview${query({ code: state.code })}`,
  );
  state.preview = letter;
  return letter;
}

/** The wallets of the signed-in account; null (with the error shown) when they cannot be read. */
async function ownWallets(): Promise<Wallet[] | null> {
  try {
    return (await get<{ wallets: Wallet[] }>('/wallets')).wallets;
  } catch (error) {
    showError(status, plainError(error));
    return null;
  }
}

/**
 * A letter already claimed (or being claimed): its claimant sees their claim, anyone else only that it has been
 * claimed. Never a wallet choice or a Claim button: a claimed letter cannot be claimed again.
 */
/** A claimed letter seen by someone who is not (or not yet known as) its claimant: no chooser, no Claim button. */
function showClaimedByOther(message: string, ...actions: HTMLElement[]): void {
  replace(
    stepSlot,
    h(
      'section',
      { class: 'card claimed-by-other', 'aria-labelledby': 'claimed-heading' },
      h('h2', { id: 'claimed-heading' }, 'This letter has been claimed'),
      h('p', null, message),
      ...actions,
    ),
  );
}

async function claimedStep(): Promise<void> {
  if (!state.user) {
    const login = h('button', { type: 'button', class: 'secondary' }, 'Log in to see your claim');
    login.addEventListener('click', () =>
      replace(
        stepSlot,
        authPanel({
          heading: 'Log in to see your claim',
          mode: 'login',
          onSignedIn: (signedIn) => {
            state.user = signedIn;
            void claimedStep().then(focusNewContent);
          },
        }),
      ),
    );
    showClaimedByOther(
      'A letter of value can be claimed only once. If you claimed it, log in to see your claim.',
      login,
    );
    return;
  }
  let own: { letter: Letter; transaction: Transaction } | null = null;
  try {
    own = await get<{ letter: Letter; transaction: Transaction }>(
      `/transfer/letter/claim${query({ code: state.code })}`,
    );
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'letter_not_found')) {
      showError(status, plainError(error));
      return;
    }
  }
  if (!own) {
    showClaimedByOther(
      `Someone else claimed it: a letter of value can be claimed only once. You are signed in as ${state.user.email}.`,
    );
    return;
  }
  const wallets = (await ownWallets()) ?? [];
  sessionStorage.removeItem(STORAGE_KEY);
  // Settled between the preview's read and this one: the preview is read again, so that both say the same.
  if (own.letter.status === 'CLAIMED' && state.preview?.status !== 'CLAIMED')
    await readPreview().catch(() => {});
  showResult(own.letter, own.transaction, wallets, true);
}

async function nextStep(): Promise<void> {
  if (!state.user) {
    try {
      state.user = (await get<{ user: User }>('/auth/session', { quiet401: true })).user;
    } catch {
      state.user = null;
    }
  }
  if (state.preview && !state.preview.claimable) {
    await claimedStep();
    return;
  }
  if (state.user && (await sentBySignedIn())) {
    ownLetterStep();
    return;
  }
  if (!state.user) {
    replace(
      stepSlot,
      authPanel({
        heading: 'Who is claiming?',
        intro:
          'Create a free account, or log in, and the amount goes straight into your wallet: if you have none ' +
          'yet, a new one is made for you as part of the claim.',
        mode: 'signup',
        onSignedIn: (signedIn) => {
          state.user = signedIn;
          void afterSignIn();
        },
      }),
    );
    return;
  }
  await walletStep();
}

/** Live (claimable) letters are the only ones a sender could mistake for a claim; more pages than this are not read. */
const OWN_LETTER_PAGES = 5;

/**
 * Whether the signed-in person sent this letter: its code is one of their own live letters' codes (the preview names
 * no sender, so their sent letters are read). Past OWN_LETTER_PAGES pages of live letters the answer is "no" and the
 * claim itself answers `cannot_claim_own_letter`; a failed read is "no" for the same reason.
 */
async function sentBySignedIn(): Promise<boolean> {
  try {
    for (const status of ['ESCROWED', 'MAILED']) {
      for (let page = 1; page <= OWN_LETTER_PAGES; page++) {
        const sent = await get<Page<Letter>>(`/transfer/letter${query({ status, page, pageSize: 100 })}`);
        if (sent.items.some((letter) => letter.claimCode && normalizeCode(letter.claimCode) === state.code))
          return true;
        if (page * sent.pageSize >= sent.total) break;
      }
    }
  } catch {
    return false;
  }
  return false;
}

/** The sender opened their own letter's link: what they can do with it, never a claim form. */
function ownLetterStep(): void {
  const headingId = uid('h');
  const logout = h('button', { type: 'button', class: 'secondary' }, 'Log out');
  const section = h(
    'section',
    { class: 'card own-letter', 'aria-labelledby': headingId, tabindex: -1 },
    h('h2', { id: headingId }, 'You sent this letter'),
    h(
      'p',
      null,
      `This is the claim link of your letter to ${state.preview?.recipientName ?? 'its recipient'}. Only the ` +
        'recipient can claim it: hand over or post the code, the link or the QR.',
    ),
    h(
      'p',
      null,
      'To take the amount back, void the letter: the escrowed amount returns to your wallet and the code stops working.',
    ),
    h('p', null, h('a', { href: '/#/letters' }, 'Open your letters')),
    h(
      'p',
      { class: 'muted' },
      `Signed in as ${state.user?.email ?? ''}. Is the recipient claiming on this computer? Log out first.`,
    ),
    logout,
  );
  logout.addEventListener('click', async () => {
    logout.disabled = true;
    try {
      await post('/auth/logout', undefined, { quiet401: true });
    } catch (error) {
      showError(status, plainError(error));
      enableAgain(logout);
      return;
    }
    state.user = null;
    await nextStep();
  });
  replace(stepSlot, section);
}

/**
 * Just signed in from this page: a person without a wallet (a new account) claims at once, into a new one. The
 * sign-in form is gone, so keyboard focus goes to the heading of what replaced it.
 */
async function afterSignIn(): Promise<void> {
  if (await sentBySignedIn()) {
    ownLetterStep();
    focusHeading(stepSlot);
    return;
  }
  const wallets = await ownWallets();
  if (wallets === null) {
    focusNewContent();
    return;
  }
  if (wallets.length > 0) {
    await walletStep(wallets);
    focusHeading(stepSlot);
    return;
  }
  const headingId = uid('h');
  const working = h('p', { class: 'muted' }, 'Creating your wallet and claiming…');
  replace(
    stepSlot,
    h(
      'section',
      { class: 'card', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, 'Claiming'),
      working,
    ),
  );
  focusHeading(stepSlot);
  await claim(NEW_WALLET, working, []);
}

/** The radio value that stands for "a new wallet, created as part of the claim". */
const NEW_WALLET = 'new';

/** The account's wallet at `address` (one already added), or a watch-only wallet added now for it. */
async function externalWallet(address: string, wallets: Wallet[]): Promise<Wallet> {
  const same = (w: Wallet) => w.address.toLowerCase() === address.toLowerCase();
  const known = wallets.find(same);
  if (known) return known;
  try {
    return (
      await post<{ wallet: Wallet }>('/wallets', { type: 'EXTERNAL', address, label: 'External address' })
    ).wallet;
  } catch (error) {
    // Added meanwhile (another tab): use it.
    const again = error instanceof ApiError && error.code === 'wallet_exists' ? await ownWallets() : null;
    const found = again?.find(same);
    if (found) return found;
    throw error;
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The wallet choice; `selected` (a wallet just added) is checked, else the primary one. */
async function walletStep(known?: Wallet[], selected?: string): Promise<void> {
  replace(status);
  const wallets = known ?? (await ownWallets());
  if (wallets === null) return;
  const headingId = uid('h');
  const legendId = uid('legend');
  const choices = [
    ...wallets.map((w) => ({
      value: w.id,
      label: `${w.label} `,
      detail: `${w.type === 'CUSTODIAL' ? 'custodial' : 'watch-only'} · ${shortHex(w.address, 4)}`,
      checked: selected ? w.id === selected : w.isPrimary,
    })),
    {
      value: NEW_WALLET,
      label: 'A new wallet ',
      detail: 'made for you as part of the claim',
      checked: false,
    },
  ];
  if (!choices.some((c) => c.checked) && choices[0]) choices[0].checked = true;
  const radios = choices.map((c) =>
    h('input', { type: 'radio', name: 'wallet', value: c.value, id: uid('w'), checked: c.checked }),
  );
  const claimButton = h('button', { type: 'submit' }, 'Claim');
  const externalAddress = h('input', {
    type: 'text',
    pattern: '0x[0-9a-fA-F]{40}',
    spellcheck: false,
    placeholder: '0x…',
  });
  const externalButton = h('button', { type: 'button', class: 'secondary' }, 'Add this address');
  /** The typed address, or null (with the reason shown) when it is not one. */
  const typedAddress = (): string | null => {
    const address = externalAddress.value.trim();
    if (ADDRESS.test(address)) return address;
    showError(status, 'Enter an address: 0x followed by 40 hexadecimal characters.');
    externalAddress.focus();
    return null;
  };
  externalButton.addEventListener('click', async () => {
    const address = typedAddress();
    if (!address) return;
    externalButton.disabled = true;
    try {
      const wallet = await externalWallet(address, wallets);
      // The address just added is the one chosen: Claim pays it.
      await walletStep(undefined, wallet.id);
      stepSlot.querySelector<HTMLInputElement>(`input[value="${CSS.escape(wallet.id)}"]`)?.focus();
    } catch (error) {
      showError(status, plainError(error));
      enableAgain(externalButton);
    }
  });
  const form = h(
    'form',
    { class: 'card stack', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, 'Where should the money go?'),
    h('p', { class: 'muted' }, `Signed in as ${state.user?.email ?? ''}.`),
    h(
      'fieldset',
      { 'aria-labelledby': legendId },
      h('legend', { id: legendId }, 'Receive into'),
      choices.map((c, i) =>
        h(
          'div',
          { class: 'choice' },
          radios[i] ?? null,
          h('label', { for: radios[i]?.id ?? '' }, c.label, h('span', { class: 'muted' }, c.detail)),
        ),
      ),
    ),
    h(
      'details',
      { class: 'own-address' },
      h('summary', null, 'Use an address you already own instead'),
      field('Your address', externalAddress, 'The amount arrives there as confidential cSTABLE.'),
      externalButton,
    ),
    claimButton,
  );
  const ownAddress = form.querySelector('details') as HTMLDetailsElement;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    replace(status);
    // An address typed under "Use an address you already own instead" is where the money goes.
    if (ownAddress.open && externalAddress.value.trim()) {
      const address = typedAddress();
      if (!address) return;
      claimButton.disabled = true;
      try {
        const wallet = await externalWallet(address, wallets);
        const all = wallets.some((w) => w.id === wallet.id) ? wallets : [...wallets, wallet];
        await claim(wallet.id, claimButton, all);
      } catch (error) {
        showError(status, plainError(error));
        enableAgain(claimButton);
      }
      return;
    }
    const walletId = radios.find((r) => r.checked)?.value;
    if (walletId) void claim(walletId, claimButton, wallets);
  });
  replace(stepSlot, form);
}

/** The wallet to claim into: an existing one, or (for `NEW_WALLET`) one created now, once. */
async function walletFor(choice: string, wallets: Wallet[]): Promise<{ id: string; all: Wallet[] }> {
  if (choice !== NEW_WALLET) return { id: choice, all: wallets };
  if (!state.createdForClaim) {
    const { wallet } = await post<{ wallet: Wallet }>('/wallets', {
      type: 'CUSTODIAL',
      label: wallets.length === 0 ? 'My wallet' : `Wallet ${wallets.length + 1}`,
    });
    state.createdForClaim = wallet;
  }
  return { id: state.createdForClaim.id, all: [...wallets, state.createdForClaim] };
}

/**
 * Claims into the chosen wallet (creating it first when the choice is a new wallet). `trigger` is the button that
 * started it (disabled meanwhile), or the line that says a one-step claim is under way.
 */
async function claim(choice: string, trigger: HTMLElement, wallets: Wallet[]): Promise<void> {
  replace(status);
  if (trigger instanceof HTMLButtonElement) trigger.disabled = true;
  const wait = longWait('Claiming: the vault is releasing the amount to your wallet…');
  trigger.after(wait.element);
  try {
    // A wallet is made only for a claim that can still happen: the letter may have been claimed meanwhile (by
    // this person elsewhere too), and a claim answered `already_claimed` would leave an empty wallet behind.
    if (choice === NEW_WALLET && !state.createdForClaim && !(await readPreview()).claimable) {
      wait.stop();
      await afterClaimMoved();
      return;
    }
    const into = await walletFor(choice, wallets);
    const result = await post<{ letter: Letter; transaction: Transaction }>('/transfer/letter/claim', {
      claimCode: state.code,
      walletId: into.id,
    });
    wait.stop();
    state.createdForClaim = null;
    sessionStorage.removeItem(STORAGE_KEY);
    showResult(result.letter, result.transaction, into.all, false);
  } catch (error) {
    wait.stop();
    if (error instanceof ApiError && (error.code === 'claim_unsettled' || error.code === 'already_claimed')) {
      // `claim_unsettled`: the release was sent, into the wallet asked for (which now holds the claim, it is no
      // spare to reuse). `already_claimed`: claimed before this press, perhaps by this person elsewhere. Either way
      // the letter is being claimed or claimed: show whose claim it is, never a second Claim.
      if (error.code === 'claim_unsettled') state.createdForClaim = null;
      await afterClaimMoved();
      return;
    }
    if (trigger instanceof HTMLButtonElement) {
      showError(status, plainError(error));
      enableAgain(trigger);
    } else {
      // A one-step claim that failed: offer the choice again (the wallet it made is kept, not made twice), with
      // the reason above it (the wallet step starts by clearing the messages, so the reason comes after it).
      await walletStep(state.createdForClaim ? [...wallets, state.createdForClaim] : wallets);
      showError(status, plainError(error));
      focusHeading(stepSlot);
    }
    status.scrollIntoView({ block: 'nearest' });
  }
}

/**
 * The letter left its claimable state while this page offered to claim it (this claim's release was sent but not
 * yet settled, or it was claimed, voided or expired meanwhile): the page starts over from its preview, which says
 * so, and a claim shows as the person's own when it is theirs, or as someone else's.
 */
async function afterClaimMoved(): Promise<void> {
  await lookUp(state.code);
}

/** The claim's outcome; `again` when the claimant opens a letter they claimed before. */
function showResult(letter: Letter, transaction: Transaction, wallets: Wallet[], again: boolean): void {
  const claimed = letter.status === 'CLAIMED';
  const wallet = wallets.find((w) => w.id === transaction.walletId) ?? null;
  const section = resultCard(letter, transaction, wallet, again);
  replace(previewSlot, again && state.preview ? previewCard(state.preview, groupCode(state.code)) : null);
  replace(stepSlot, section);
  section.focus();
  if (!claimed) {
    const timer = window.setInterval(async () => {
      try {
        const [{ letter: next }, { transaction: tx }] = await Promise.all([
          get<{ letter: Letter }>(`/transfer/letter/${letter.id}`),
          get<{ transaction: Transaction }>(`/transactions/${transaction.id}`),
        ]);
        if (next.status === 'CLAIMED' || tx.status === 'FAILED') {
          window.clearInterval(timer);
          if (again) await readPreview().catch(() => {});
          showResult(next, tx, wallets, again);
        }
      } catch {
        // Keep trying; the page says it is in progress.
      }
    }, 2000);
  }
}

async function start(): Promise<void> {
  installSkipLink();
  replace(
    app,
    h(
      'header',
      { class: 'top' },
      h('a', { href: '/', class: 'brand' }, 'sealpay'),
      h('span', { class: 'muted' }, 'Claim a letter of value'),
    ),
    bannerSlot,
    main,
  );
  replace(main, h('h1', { tabindex: -1 }, 'Claim your letter of value'), status, previewSlot, stepSlot);
  onSessionLost(() => {
    state.user = null;
    void nextStep();
  });
  void networkBanner(bannerSlot);
  // A claim link opened (or pasted) while the page is open only changes the fragment.
  window.addEventListener('hashchange', () => {
    const next = takeCodeFromHash();
    if (next) void lookUp(next);
  });
  const initial = takeCodeFromHash() || sessionStorage.getItem(STORAGE_KEY) || '';
  if (initial) await lookUp(initial);
  else codeEntry();
}

/** The code travels in the fragment (never sent to a server); keep it out of the address bar and history. */
function takeCodeFromHash(): string {
  let fromHash = location.hash.replace(/^#/, '');
  try {
    fromHash = decodeURIComponent(fromHash);
  } catch {
    // A malformed escape: let the code check reject it.
  }
  if (fromHash) history.replaceState(null, '', location.pathname);
  return fromHash;
}

void start();
