/** The dashboard at `/`: wallets and money movement, letters, settings. Hash routes `#/wallets` and so on. */

import { ApiError, get, onSessionLost, post } from '../api.ts';
import { authPanel } from '../auth.ts';
import { networkBanner, bannerSlot as newBannerSlot } from '../banner.ts';
import { h, installSkipLink, replace } from '../dom.ts';
import { mailboxPage } from '../mailbox.ts';
import { resetPasswordPage, resetTokenOf } from '../password-reset.ts';
import type { NetworkInfo, User, Wallet } from '../types.ts';
import type { Ctx } from './context.ts';
import { lettersView } from './letters/view.ts';
import { settingsView } from './settings/view.ts';
import { walletsView } from './wallets/view.ts';

const ROUTES = {
  wallets: { title: 'Wallets', view: walletsView },
  letters: { title: 'Letters', view: lettersView },
  settings: { title: 'Settings', view: settingsView },
} as const;
type Route = keyof typeof ROUTES;

const app = document.getElementById('app') as HTMLElement;
const bannerSlot = newBannerSlot();
const main = h('main', { id: 'main', tabindex: -1 });
const nav = h('nav', { 'aria-label': 'Main' });
const account = h('div', { class: 'account' });
let network: NetworkInfo | null = null;
let timers: number[] = [];
let ctx: Ctx | null = null;

function stopTimers(): void {
  for (const timer of timers) window.clearInterval(timer);
  timers = [];
}

function currentRoute(): Route {
  const name = location.hash.replace(/^#\/?/, '');
  return name in ROUTES ? (name as Route) : 'wallets';
}

function renderNav(active: Route | null): void {
  if (!ctx) {
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

async function route(focus: boolean): Promise<void> {
  if (!ctx) return;
  stopTimers();
  const active = currentRoute();
  renderNav(active);
  document.title = `${ROUTES[active].title} · sealpay`;
  const view = await ROUTES[active].view(ctx);
  if (currentRoute() !== active) return;
  replace(main, view);
  if (focus) main.querySelector('h1')?.focus();
}

/** The sign-in form: `mode` Log in after a log-out or an ended session, Create an account for a first visit. */
function signedOut(message?: string, mode: 'signup' | 'login' = message ? 'login' : 'signup'): void {
  stopTimers();
  ctx = null;
  renderNav(null);
  renderAccount(null);
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
    network,
    wallets: wallets.wallets,
    async reloadWallets() {
      shared.wallets = (await get<{ wallets: Wallet[] }>('/wallets')).wallets;
    },
    setUser(next) {
      shared.user = next;
      renderAccount(next);
      if (!next.mustChangePassword) document.getElementById('temporary-password')?.remove();
    },
    every(ms, tick) {
      timers.push(
        window.setInterval(() => {
          if (document.visibilityState === 'visible') void tick();
        }, ms),
      );
    },
  };
  ctx = shared;
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
    ctx = null;
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
    if (ctx)
      signedOut(
        error.code === 'session_expired' ? 'Your session has ended. Please log in again.' : 'Please log in.',
      );
  });
  window.addEventListener('hashchange', () => {
    if (showPublicPage()) return;
    if (location.hash.startsWith('#/')) void route(true);
  });
  network = await networkBanner(bannerSlot);
  if (showPublicPage()) return;
  try {
    const session = await get<{ user: User }>('/auth/session', { quiet401: true });
    await signedIn(session.user);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) signedOut();
    else signedOut(error instanceof Error ? error.message : String(error));
  }
}

void start();
