/** The dashboard at `/`: wallets and money movement, letters, settings. Hash routes `#/wallets` and so on. */

import { ApiError, get, onServiceAnswered, onSessionLost, post } from '../api.ts';
import { authPanel } from '../auth.ts';
import { networkBanner, bannerSlot as newBannerSlot } from '../banner.ts';
import { clearStaleFailures, h, installSkipLink, replace } from '../dom.ts';
import { plainError } from '../errors.ts';
import { mailboxPage } from '../mailbox.ts';
import { resetPasswordPage, resetTokenOf } from '../password-reset.ts';
import type { NetworkInfo, User, Wallet } from '../types.ts';
import type { Ctx } from './context.ts';
import { lettersView } from './letters/view.ts';
import { settingsView } from './settings/view.ts';
import { receiptView } from './wallets/receipt-view.ts';
import { transactionView } from './wallets/transaction-view.ts';
import { walletsView } from './wallets/view.ts';

const ROUTES = {
  wallets: { title: 'Wallets', view: walletsView },
  letters: { title: 'Letters', view: lettersView },
  settings: { title: 'Settings', view: settingsView },
} as const;
type Route = keyof typeof ROUTES;

/** Pages under a view, not in the navigation: `#/transaction/{id}` and `#/receipt/{id}` (under Wallets). */
const SUBPAGES = {
  transaction: transactionView,
  receipt: receiptView,
} as const;
type Subpage = keyof typeof SUBPAGES;
const SUBPAGE_TITLES: Record<Subpage, string> = { transaction: 'Transaction', receipt: 'Receipt' };

/** The sub-page the address names, with its id, or null. */
function currentSubpage(): { name: Subpage; id: string | null } | null {
  const [name, id] = location.hash.replace(/^#\/?/, '').split('/');
  if (!name || !(name in SUBPAGES)) return null;
  let decoded: string | null = null;
  try {
    decoded = id ? decodeURIComponent(id) : null;
  } catch {
    decoded = null;
  }
  return { name: name as Subpage, id: decoded };
}

const app = document.getElementById('app') as HTMLElement;
const bannerSlot = newBannerSlot();
const main = h('main', { id: 'main', tabindex: -1 });
const nav = h('nav', { 'aria-label': 'Main' });
const account = h('div', { class: 'account' });
/** The page's state, in one place: what the service said of its network, and the session's view. */
const state = {
  network: null as NetworkInfo | null,
  /** The view's `every` timers, stopped when it is left. */
  timers: [] as number[],
  /** The signed-in session's shared context (null while signed out). */
  ctx: null as Ctx | null,
  /**
   * Bumped by every navigation and every sign-in or sign-out: a view that finishes loading under an older number
   * is dropped (it would paint over the sign-in form of an ended session, or over the view navigated to meanwhile).
   */
  generation: 0,
};

function stopTimers(): void {
  for (const timer of state.timers) window.clearInterval(timer);
  state.timers = [];
}

function currentRoute(): Route {
  const name = location.hash.replace(/^#\/?/, '');
  return name in ROUTES ? (name as Route) : 'wallets';
}

function renderNav(active: Route | null): void {
  if (!state.ctx) {
    replace(nav);
    return;
  }
  replace(
    nav,
    h(
      'ul',
      null,
      (Object.keys(ROUTES) as Route[]).map((route) =>
        h(
          'li',
          null,
          h(
            'a',
            { href: `#/${route}`, 'aria-current': route === active ? 'page' : undefined },
            ROUTES[route].title,
          ),
        ),
      ),
    ),
  );
}

function renderAccount(user: User | null): void {
  if (!user) {
    replace(account);
    return;
  }
  const logout = h('button', { type: 'button', class: 'secondary small' }, 'Log out');
  logout.addEventListener('click', async () => {
    try {
      await post('/auth/logout', undefined, { quiet401: true });
    } catch {
      // The session may already be gone; the screen resets either way.
    }
    // An explicit log-out starts the next visitor on the default view (an expired session keeps its place).
    history.replaceState(null, '', '/');
    // Whoever logged out has an account: back to Log in, not to Create an account.
    signedOut(undefined, 'login');
  });
  replace(account, h('span', { class: 'who' }, user.email), logout);
}

/**
 * The view's own context: the shared one, with timers that only start while this view is still the one on screen
 * (a view still loading when the session ends or the person moves on registers none).
 */
function viewContext(shared: Ctx, at: number): Ctx {
  const own: Ctx = Object.create(shared);
  own.every = (ms, tick) => {
    if (at !== state.generation) return;
    state.timers.push(
      window.setInterval(() => {
        if (at === state.generation && document.visibilityState === 'visible') void tick();
      }, ms),
    );
  };
  return own;
}

async function route(focus: boolean): Promise<void> {
  if (!state.ctx) return;
  stopTimers();
  state.generation += 1;
  const at = state.generation;
  const subpage = currentSubpage();
  const active = subpage ? 'wallets' : currentRoute();
  renderNav(active);
  document.title = `${subpage ? SUBPAGE_TITLES[subpage.name] : ROUTES[active].title} · sealpay`;
  const own = viewContext(state.ctx, at);
  const view = subpage ? await SUBPAGES[subpage.name](own, subpage.id) : await ROUTES[active].view(own);
  if (at !== state.generation) return;
  replace(main, view);
  if (focus) main.querySelector('h1')?.focus();
}

/** The sign-in form: `mode` Log in after a log-out or an ended session, Create an account for a first visit. */
function signedOut(message?: string, mode: 'signup' | 'login' = message ? 'login' : 'signup'): void {
  stopTimers();
  state.generation += 1;
  state.ctx = null;
  renderNav(null);
  renderAccount(null);
  document.getElementById('temporary-password')?.remove();
  document.title = 'sealpay';
  replace(
    main,
    h('h1', { tabindex: -1 }, 'sealpay'),
    h('p', { class: 'lead' }, 'Confidential stablecoin payments and letters of value.'),
    message ? h('p', { class: 'error', role: 'alert' }, message) : null,
    authPanel({
      heading: 'Get started',
      mode,
      onSignedIn: (user) => void signedIn(user),
    }),
  );
}

async function signedIn(user: User): Promise<void> {
  const wallets = await get<{ wallets: Wallet[] }>('/wallets');
  const shared: Ctx = {
    user,
    network: state.network,
    wallets: wallets.wallets,
    async reloadWallets() {
      shared.wallets = (await get<{ wallets: Wallet[] }>('/wallets')).wallets;
    },
    setUser(next) {
      shared.user = next;
      renderAccount(next);
      if (!next.mustChangePassword) document.getElementById('temporary-password')?.remove();
    },
    every() {
      // Each view gets its own `every` (viewContext), bound to the navigation that built it.
    },
  };
  state.ctx = shared;
  renderAccount(user);
  if (user.mustChangePassword) {
    bannerSlot.append(
      h(
        'p',
        { class: 'banner', role: 'note', id: 'temporary-password' },
        h('strong', null, 'Your password is temporary.'),
        ' ',
        h('a', { href: '#/settings' }, 'Choose your own in Settings'),
        '.',
      ),
    );
  }
  await route(true);
}

/** Pages open to anyone, signed in or not: the reset page of an emailed link, the sandbox's local mailbox. */
function showPublicPage(): boolean {
  const token = resetTokenOf(location.hash);
  if (token !== null) {
    stopTimers();
    state.generation += 1;
    state.ctx = null;
    renderNav(null);
    renderAccount(null);
    document.title = 'Reset your password · sealpay';
    replace(
      main,
      h('h1', { tabindex: -1 }, 'sealpay'),
      resetPasswordPage(token, () => signedOut('Log in with your new password.')),
    );
    return true;
  }
  if (location.hash === '#/mailbox') {
    stopTimers();
    state.generation += 1;
    document.title = 'Local mailbox · sealpay';
    replace(main, mailboxPage());
    return true;
  }
  return false;
}

async function start(): Promise<void> {
  installSkipLink();
  replace(
    app,
    h('header', { class: 'top' }, h('a', { href: '#/wallets', class: 'brand' }, 'sealpay'), nav, account),
    bannerSlot,
    main,
    h('footer', null, h('a', { href: '/docs' }, 'API reference')),
  );
  onSessionLost((error) => {
    if (!state.ctx) return;
    // The address keeps the view: logging in again returns there.
    const subpage = currentSubpage();
    const back = `Log in to go back to ${subpage ? `the ${SUBPAGE_TITLES[subpage.name].toLowerCase()}` : ROUTES[currentRoute()].title}.`;
    signedOut(
      error.code === 'session_expired' ? `Your session has ended. ${back}` : `You are signed out. ${back}`,
    );
    main.querySelector<HTMLInputElement>('input[type="email"]')?.focus();
  });
  onServiceAnswered(clearStaleFailures);
  window.addEventListener('hashchange', () => {
    if (showPublicPage()) return;
    if (location.hash.startsWith('#/')) void route(true);
  });
  state.network = await networkBanner(bannerSlot);
  if (showPublicPage()) return;
  try {
    const session = await get<{ user: User }>('/auth/session', { quiet401: true });
    await signedIn(session.user);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) signedOut();
    else signedOut(plainError(error));
  }
}

void start();
