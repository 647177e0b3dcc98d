/**
 * Browser-suite helpers: Debian's chromium driven by playwright-core against the started service, a small API
 * client with a cookie jar (for the "other side" of a flow), RFC 6238 TOTP, screenshots under test-results/.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterEach, expect } from 'vitest';

export const BASE_URL = process.env.E2E_BASE_URL ?? 'http://localhost:18080';
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RESULTS_DIR = path.join(ROOT, 'test-results', 'e2e');
export const PASSWORD = 'Sealed-Letter-2024';

export const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Chromium with a fresh profile (playwright-core launches every browser with a new temporary --user-data-dir). */
export async function launch(): Promise<Browser> {
  return await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
}

export interface Session {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors, console errors and CSP violations seen so far. */
  problems: string[];
}

export async function openSession(
  browser: Browser,
  viewport: { width: number; height: number } = { width: 1280, height: 900 },
): Promise<Session> {
  const context = await browser.newContext({ viewport, acceptDownloads: true, baseURL: BASE_URL });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    // Failed API calls the page handles (4xx answers shown to the user) log a network error in Chrome.
    if (/Failed to load resource: the server responded with a status of 4\d\d/.test(text)) return;
    problems.push(`console: ${text}`);
  });
  const session = { context, page, problems };
  open.add(session);
  return session;
}

const open = new Set<Session>();

/** A browser session signed in as `client`'s account (its session cookie handed to the browser). */
export async function signedInSession(
  browser: Browser,
  client: ApiClient,
  viewport?: { width: number; height: number },
): Promise<Session> {
  const session = await openSession(browser, viewport);
  const [name, value] = client.cookie.split('=');
  await session.context.addCookies([{ name: name ?? '', value: value ?? '', url: BASE_URL }]);
  return session;
}

/** The widths every view is checked at: a desktop and a 375 px phone. */
export const WIDTHS = [1280, 375] as const;

/** A viewport `width` wide, as tall as a desktop window or a phone's screen. */
export function viewportOf(width: number): { width: number; height: number } {
  return { width, height: width < 600 ? 812 : 900 };
}

/**
 * Forgets the problems `expected` matches: what the browser logs for an answer the test made happen on purpose (a
 * `502` the service gives, a connection the test cut). Anything else still fails the test in `finish`.
 */
export function allowProblems(session: Session, expected: RegExp): void {
  session.problems.splice(0, session.problems.length, ...session.problems.filter((p) => !expected.test(p)));
}

/** On a failed test, screenshots every page still open as `<test name>-failed.png`, then closes them. */
export function captureFailures(): void {
  afterEach(async (context) => {
    const failed = context.task.result?.state === 'fail';
    const name = context.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
    let index = 0;
    for (const session of open) {
      index += 1;
      if (failed) await screenshot(session.page, `${name}-failed-${index}`).catch(() => {});
      await session.context.close().catch(() => {});
    }
    open.clear();
  });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Screenshot, then no page errors, no CSP violations, then close. */
export async function finish(session: Session, name: string): Promise<void> {
  await screenshot(session.page, name);
  open.delete(session);
  await session.context.close();
  expect(session.problems).toEqual([]);
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.com`;
}

// ------------------------------------------------------------------------------------------------- UI steps
export async function signUpInPage(page: Page, email: string, name?: string): Promise<void> {
  await page.getByRole('button', { name: 'Create an account' }).click();
  if (name) await page.getByLabel('Your name (optional)').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
}

/**
 * The "Log in" tab of the sign-in panel (after a log-out the Log in form shows too, whose submit button has the
 * same name).
 */
export function logInTab(page: Page) {
  return page.getByRole('group', { name: 'Account' }).getByRole('button', { name: 'Log in', exact: true });
}

export async function logOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('heading', { name: 'Get started' }).waitFor();
}

// ------------------------------------------------------------------------------------------------- API client
interface Envelope<T> {
  ok: boolean;
  data?: T;
  error?: { code: string; message: string; details?: unknown };
}

/** A caller of the API from the test process, with its own session cookie (another account than the page's). */
export class ApiClient {
  cookie = '';
  authorization = '';

  async call<T>(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    const result = await this.raw<T>(method, route, body, headers);
    if (!result.body.ok) {
      throw new Error(`${method} ${route} → ${result.status} ${JSON.stringify(result.body.error)}`);
    }
    return result.body.data as T;
  }

  async raw<T>(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Envelope<T> }> {
    const init: RequestInit = { method, headers: { ...headers } };
    const h = init.headers as Record<string, string>;
    if (this.cookie) h.cookie = this.cookie;
    if (this.authorization) h.authorization = this.authorization;
    if (body !== undefined) {
      h['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${BASE_URL}/api/v1${route}`, init);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
    if (cookie) this.cookie = cookie.split(';')[0] ?? '';
    return { status: response.status, body: (await response.json()) as Envelope<T> };
  }

  async signUp(email: string, name?: string): Promise<void> {
    await this.call('POST', '/auth/signup', { email, password: PASSWORD, ...(name ? { name } : {}) });
  }

  async waitForTransaction(id: string, done: string[] = ['CONFIRMED', 'SETTLED'], timeoutMs = 60_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const read = await this.raw<{ transaction: { status: string; errorCode: string | null } }>(
        'GET',
        `/transactions/${id}`,
      );
      // The read budget is the principal's, shared with the page's own polls when the browser signed in as this
      // client: a 429 says when to ask again, as the interface tells every client.
      if (read.status === 429) {
        const retryAfter = Number(
          (read.body.error?.details as { retryAfter?: number } | undefined)?.retryAfter ?? 1,
        );
        await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
        continue;
      }
      if (!read.body.ok)
        throw new Error(`GET /transactions/${id} → ${read.status} ${JSON.stringify(read.body.error)}`);
      const { transaction } = read.body.data as { transaction: { status: string; errorCode: string | null } };
      if (done.includes(transaction.status)) return transaction;
      if (transaction.status === 'FAILED')
        throw new Error(`transaction ${id} failed: ${transaction.errorCode}`);
      if (Date.now() > until) throw new Error(`transaction ${id} still ${transaction.status}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  /** A custodial wallet holding `confidential` cSTABLE (fund, then mint), for letters. */
  async fundedWallet(
    publicAmount: string,
    confidential: string,
    label = 'Sender',
  ): Promise<{ id: string; address: string }> {
    const { wallet } = await this.call<{ wallet: { id: string; address: string } }>('POST', '/wallets', {
      type: 'CUSTODIAL',
      label,
    });
    const fund = await this.call<{ transaction: { id: string } }>('POST', '/fund', {
      walletId: wallet.id,
      amount: publicAmount,
    });
    await this.waitForTransaction(fund.transaction.id);
    const mint = await this.call<{ transaction: { id: string } }>('POST', '/mint', {
      walletId: wallet.id,
      amount: confidential,
    });
    await this.waitForTransaction(mint.transaction.id);
    return wallet;
  }
}

export interface CreatedLetter {
  id: string;
  status: string;
  claimCode: string;
  claimUrl: string;
}

export async function createLetter(
  client: ApiClient,
  walletId: string,
  amount: string,
  recipientName: string,
  memo?: string,
): Promise<CreatedLetter> {
  const { letter } = await client.call<{ letter: CreatedLetter }>('POST', '/transfer/letter', {
    walletId,
    amount,
    ...(memo ? { memo } : {}),
    recipient: {
      name: recipientName,
      address: { line1: '1 Main Street', city: 'Springfield', region: 'IL', postal: '62701', country: 'US' },
    },
    expiresInDays: 30,
  });
  return letter;
}

/** Routes the running service publishes (for skipping tests of routes not built yet, with the reason). */
export async function publishedRoutes(): Promise<Set<string>> {
  const response = await fetch(`${BASE_URL}/api/v1/openapi.json`);
  const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
  const routes = new Set<string>();
  for (const [route, methods] of Object.entries(document.paths)) {
    for (const method of Object.keys(methods)) routes.add(`${method.toUpperCase()} ${route}`);
  }
  return routes;
}

// ------------------------------------------------------------------------------------------------- TOTP
function base32Decode(secret: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of secret.replace(/=+$/, '').toUpperCase()) {
    const index = alphabet.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 TOTP (HMAC-SHA1, 30 s steps, 6 digits) for the step `offset` steps from now. */
export function totp(secret: string, offset = 0, now = Date.now()): string {
  const counter = Math.floor(now / 1000 / 30) + offset;
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', base32Decode(secret)).update(message).digest();
  const start = (digest[digest.length - 1] ?? 0) & 0x0f;
  const binary = digest.readUInt32BE(start) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

/** Waits for an alert (an error shown to the user) containing `text`. */
export async function alert(page: Page, text: string, timeout = 30_000): Promise<void> {
  await page.getByRole('alert').filter({ hasText: text }).first().waitFor({ timeout });
}

/** Waits for a polite status message containing `text`. */
export async function notice(page: Page, text: string, timeout = 30_000): Promise<void> {
  await page.locator('.info').filter({ hasText: text }).first().waitFor({ timeout });
}

/** Adds a custodial wallet from the dashboard's form and waits for its card. */
export async function addWallet(page: Page, label: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Add a wallet' });
  await form.getByLabel('Label (optional)').fill(label);
  await form.getByRole('button', { name: 'Create wallet' }).click();
  await page.getByRole('article', { name: new RegExp(`^${label}`) }).waitFor();
}

/** Queues one operation (`Fund`, `Mint`, `Transfer`, `Redeem`) from the wallet labelled `wallet`. */
export async function move(
  page: Page,
  op: string,
  wallet: string,
  amount: string,
  to?: string,
): Promise<void> {
  const form = page.getByRole('form', { name: 'Move money' });
  await form.getByRole('radio', { name: op }).check();
  const walletId = await page
    .getByRole('article', { name: new RegExp(`^${wallet}`) })
    .getAttribute('data-wallet-id');
  await form.getByLabel('Wallet').selectOption(walletId ?? '');
  await form.getByLabel('Amount').fill(amount);
  if (to) await form.getByLabel('Recipient address').fill(to);
  await form.getByRole('button', { name: op }).click();
  // The operation's own status line, once the service queued it (it carries the transaction's id).
  await form
    .locator('.op-line[data-tx-id]')
    .filter({ hasText: `${op} of` })
    .first()
    .waitFor({ timeout: 30_000 });
}
