/**
 * The public claim page at `/claim#CODE`: preview of the letter, sign up or log in, pick or create a wallet,
 * claim (blocks up to ~20 s), then the revealed amount, memo and claim transaction.
 */

import { ApiError, get, onSessionLost, post, query } from '../api.ts';
import { authPanel } from '../auth.ts';
import { networkBanner, bannerSlot as newBannerSlot } from '../banner.ts';
import { field, h, installSkipLink, replace, shortHex, showError, statusArea, uid } from '../dom.ts';
import { plainError } from '../errors.ts';
import { longWait } from '../progress.ts';
import type { Letter, LetterPreview, Transaction, User, Wallet } from '../types.ts';
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
let code = '';
let preview: LetterPreview | null = null;
let user: User | null = null;

function renderPreview(p: LetterPreview): void {
  replace(previewSlot, previewCard(p, groupCode(code)));
}

// ------------------------------------------------------------------------------------------------- steps
function codeEntry(message?: string): void {
  const input = h('input', {
    type: 'text',
    autocomplete: 'off',
    spellcheck: false,
    autocapitalize: 'characters',
    required: true,
    maxlength: 64,
    class: 'code-input',
    placeholder: 'XXXX-XXXX-XXXX-XXXX-XXXX-XXXX-XXXX',
  });
  const submit = h('button', { type: 'submit' }, 'Look up letter');
  const form = h(
    'form',
    { class: 'card stack', 'aria-label': 'Enter a claim code' },
    h('h2', null, 'Enter your claim code'),
    field('Claim code', input, '28 letters and digits, printed on the letter in 7 groups of 4.'),
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void lookUp(input.value);
  });
  replace(previewSlot);
  replace(stepSlot, form);
  if (message) showError(status, message);
  input.focus();
}

async function lookUp(raw: string): Promise<void> {
  replace(status);
  const normalized = normalizeCode(raw);
  if (!CROCKFORD.test(normalized)) {
    codeEntry(
      plainError(new ApiError({ status: 400, code: 'invalid_claim_code', message: 'Invalid claim code.' })),
    );
    return;
  }
  code = normalized;
  sessionStorage.setItem(STORAGE_KEY, code);
  try {
    preview = (await get<{ letter: LetterPreview }>(`/transfer/letter/preview${query({ code })}`)).letter;
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.code === 'letter_not_found' || error.code === 'invalid_claim_code')
    ) {
      sessionStorage.removeItem(STORAGE_KEY);
      codeEntry(plainError(error));
    } else {
      replace(stepSlot);
      showError(status, plainError(error));
    }
    return;
  }
  renderPreview(preview);
  const canProceed = preview.claimable || preview.status === 'CLAIMING' || preview.status === 'CLAIMED';
  if (!canProceed) {
    replace(
      stepSlot,
      h(
        'p',
        { class: 'card' },
        preview.status === 'EXPIRED'
          ? plainError(new ApiError({ status: 410, code: 'letter_expired', message: '' }))
          : plainError(new ApiError({ status: 409, code: 'letter_not_claimable', message: '' })),
      ),
    );
    return;
  }
  if (!preview.claimable) {
    showError(status, 'This letter was already claimed. If you claimed it, log in to see your claim.');
  }
  await nextStep();
}

async function nextStep(): Promise<void> {
  if (!user) {
    try {
      user = (await get<{ user: User }>('/auth/session', { quiet401: true })).user;
    } catch {
      user = null;
    }
  }
  if (!user) {
    replace(
      stepSlot,
      authPanel({
        heading: 'Who is claiming?',
        intro: 'Create a free account, or log in, to receive the amount into your own wallet.',
        mode: 'signup',
        onSignedIn: (signedIn) => {
          user = signedIn;
          void walletStep();
        },
      }),
    );
    return;
  }
  await walletStep();
}

async function walletStep(): Promise<void> {
  replace(status);
  let wallets: Wallet[];
  try {
    wallets = (await get<{ wallets: Wallet[] }>('/wallets')).wallets;
  } catch (error) {
    showError(status, plainError(error));
    return;
  }
  const headingId = uid('h');
  const legendId = uid('legend');
  const radios = wallets.map((w) =>
    h('input', { type: 'radio', name: 'wallet', value: w.id, id: uid('w'), checked: w.isPrimary }),
  );
  if (radios.length > 0 && !radios.some((r) => r.checked) && radios[0]) radios[0].checked = true;
  const claimButton = h('button', { type: 'submit', disabled: wallets.length === 0 }, 'Claim');
  const createButton = h('button', { type: 'button', class: 'secondary' }, 'Create a new wallet');
  createButton.addEventListener('click', async () => {
    createButton.disabled = true;
    try {
      await post('/wallets', {
        type: 'CUSTODIAL',
        label: wallets.length === 0 ? 'My wallet' : `Wallet ${wallets.length + 1}`,
      });
      await walletStep();
    } catch (error) {
      showError(status, plainError(error));
      createButton.disabled = false;
    }
  });
  const externalAddress = h('input', {
    type: 'text',
    pattern: '0x[0-9a-fA-F]{40}',
    spellcheck: false,
    placeholder: '0x…',
  });
  const externalButton = h('button', { type: 'button', class: 'secondary' }, 'Add this address');
  externalButton.addEventListener('click', async () => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(externalAddress.value.trim())) {
      showError(status, 'Enter an address: 0x followed by 40 hexadecimal characters.');
      externalAddress.focus();
      return;
    }
    externalButton.disabled = true;
    try {
      await post('/wallets', {
        type: 'EXTERNAL',
        address: externalAddress.value.trim(),
        label: 'External address',
      });
      await walletStep();
    } catch (error) {
      showError(status, plainError(error));
      externalButton.disabled = false;
    }
  });
  const form = h(
    'form',
    { class: 'card stack', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, 'Where should the money go?'),
    h('p', { class: 'muted' }, `Signed in as ${user?.email ?? ''}.`),
    wallets.length === 0
      ? h('p', null, 'You have no wallet yet. Create one to receive the amount.')
      : h(
          'fieldset',
          { 'aria-labelledby': legendId },
          h('legend', { id: legendId }, 'Receive into'),
          wallets.map((w, i) =>
            h(
              'div',
              { class: 'choice' },
              radios[i] ?? null,
              h(
                'label',
                { for: radios[i]?.id ?? '' },
                `${w.label} `,
                h(
                  'span',
                  { class: 'muted' },
                  `${w.type === 'CUSTODIAL' ? 'custodial' : 'watch-only'} · ${shortHex(w.address, 4)}`,
                ),
              ),
            ),
          ),
        ),
    h('div', { class: 'actions' }, createButton),
    h(
      'details',
      null,
      h('summary', null, 'Use an address you already own instead'),
      field('Your address', externalAddress, 'The amount arrives there as confidential cSTABLE.'),
      externalButton,
    ),
    claimButton,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const walletId = radios.find((r) => r.checked)?.value;
    if (walletId) void claim(walletId, claimButton);
  });
  replace(stepSlot, form);
}

async function claim(walletId: string, button: HTMLButtonElement): Promise<void> {
  replace(status);
  button.disabled = true;
  const wait = longWait('Claiming: the vault is releasing the amount to your wallet…');
  button.after(wait.element);
  try {
    const result = await post<{ letter: Letter; transaction: Transaction }>('/transfer/letter/claim', {
      claimCode: code,
      walletId,
    });
    wait.stop();
    sessionStorage.removeItem(STORAGE_KEY);
    showResult(result.letter, result.transaction);
  } catch (error) {
    wait.stop();
    button.disabled = false;
    showError(status, plainError(error));
    status.scrollIntoView({ block: 'nearest' });
  }
}

function showResult(letter: Letter, transaction: Transaction): void {
  const claimed = letter.status === 'CLAIMED';
  const section = resultCard(letter, transaction);
  replace(previewSlot);
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
          showResult(next, tx);
        }
      } catch {
        // Keep trying; the page says it is in progress.
      }
    }, 5000);
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
    user = null;
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
