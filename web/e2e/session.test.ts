/**
 * Issue 16 item 1: a session that ends mid-use (a password change elsewhere, a deleted cookie) always brings the
 * sign-in form, on every view, and logging in again returns to that view. Item 10: a wrong current password in
 * Settings has words of its own.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  alert,
  BASE_URL,
  captureFailures,
  finish,
  launch,
  openSession,
  PASSWORD,
  screenshot,
  signUpInPage,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();

beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const HEADINGS = { wallets: 'Wallets', letters: 'Letters of value', settings: 'Settings' } as const;

async function viewShown(page: Page, view: keyof typeof HEADINGS): Promise<void> {
  await page.getByRole('heading', { name: HEADINGS[view], level: 1 }).waitFor();
  // Wallets is also the view of the bare address (`/`, right after sign-up).
  expect(new URL(page.url()).hash).toMatch(
    view === 'wallets' ? /^(#\/wallets)?$/ : new RegExp(`^#/${view}$`),
  );
  await expect.poll(() => page.getByRole('navigation', { name: 'Main' }).getByRole('link').count()).toBe(3);
}

/** The ended session's screen: the log-in form and the reason, and nothing of the signed-in views. */
async function signInShown(page: Page, reason: string, view: keyof typeof HEADINGS): Promise<void> {
  await alert(
    page,
    `${reason} Log in to go back to ${HEADINGS[view] === 'Letters of value' ? 'Letters' : HEADINGS[view]}.`,
  );
  await page.getByRole('form', { name: 'Log in' }).waitFor();
  expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').count()).toBe(0);
  expect(await page.getByText('No transactions yet.').count()).toBe(0);
  expect(await page.getByRole('heading', { level: 1, name: HEADINGS[view] }).count()).toBe(0);
  // Nothing repaints the dead view over the form a moment later (a view that was still loading, a poll).
  await page.waitForTimeout(1500);
  await page.getByRole('form', { name: 'Log in' }).waitFor();
  expect(await page.getByRole('heading', { level: 1, name: HEADINGS[view] }).count()).toBe(0);
}

async function logIn(page: Page, email: string, password: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Log in' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Log in' }).click();
}

describe('an ended session', () => {
  it('brings the sign-in form on Settings, Wallets and Letters, and logging in returns to the view', async () => {
    const session = await openSession(browser);
    const { page, context } = session;
    const email = uniqueEmail('ended');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();

    // 1. The password is changed from another client: this session is superseded. Navigating to Settings.
    await page.getByRole('link', { name: 'Letters' }).click();
    await viewShown(page, 'letters');
    const other = new ApiClient();
    await other.call('POST', '/auth/login', { email, password: PASSWORD });
    const newPassword = 'Another-Sealed-2025';
    await other.call('POST', '/me/password', { currentPassword: PASSWORD, newPassword });
    await page.getByRole('link', { name: 'Settings' }).click();
    await signInShown(page, 'Your session has ended.', 'settings');
    expect(new URL(page.url()).hash).toBe('#/settings');
    await screenshot(page, 'session-ended-1280');
    await logIn(page, email, newPassword);
    await viewShown(page, 'settings');

    // 2. The session cookie is deleted while on Settings; the next navigation is to Wallets.
    await context.clearCookies();
    await page.getByRole('link', { name: 'Wallets' }).click();
    await signInShown(page, 'You are signed out.', 'wallets');
    await logIn(page, email, newPassword);
    await viewShown(page, 'wallets');

    // 3. The cookie goes again; this time on the way to Letters (the view that used to keep its error and no way out).
    await context.clearCookies();
    await page.getByRole('link', { name: 'Letters' }).click();
    await signInShown(page, 'You are signed out.', 'letters');
    await logIn(page, email, newPassword);
    await viewShown(page, 'letters');
    await finish(session, 'session-ended-back-to-letters');
  });

  it('ends on the open Wallets view when its next request meets the ended session, on a phone too', async () => {
    const session = await openSession(browser, { width: 375, height: 800 });
    const { page, context } = session;
    const email = uniqueEmail('ended-phone');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Add a wallet' });
    await form.getByLabel('Label (optional)').fill('Phone');
    await form.getByRole('button', { name: 'Create wallet' }).click();
    await page.getByRole('article', { name: /^Phone/ }).waitFor();
    await context.clearCookies();
    // No navigation: the Refresh of the activity list is the request that meets the ended session.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await signInShown(page, 'You are signed out.', 'wallets');
    await screenshot(page, 'session-ended-375');
    await logIn(page, email, PASSWORD);
    await viewShown(page, 'wallets');
    await page.getByRole('article', { name: /^Phone/ }).waitFor();
    await finish(session, 'session-ended-phone');
  });
  it('ends on a transaction and its receipt too, and logging in returns to the receipt, verified', async () => {
    const email = uniqueEmail('ended-receipt');
    const owner = new ApiClient();
    await owner.signUp(email);
    const { wallet } = await owner.call<{ wallet: { id: string } }>('POST', '/wallets', {
      type: 'CUSTODIAL',
    });
    const { transaction } = await owner.call<{ transaction: { id: string } }>('POST', '/fund', {
      walletId: wallet.id,
      amount: '10',
    });
    await owner.waitForTransaction(transaction.id);
    const session = await openSession(browser);
    const { page, context } = session;
    const [name, value] = owner.cookie.split('=');
    await context.addCookies([{ name: name ?? '', value: value ?? '', url: BASE_URL }]);
    await page.goto(`/#/transaction/${transaction.id}`);
    await page.getByRole('heading', { name: 'Test money added +10.00 STABLE', level: 1 }).waitFor();

    // The cookie goes while the details are open; the next navigation is to the receipt.
    await context.clearCookies();
    await page.getByRole('link', { name: 'View receipt' }).click();
    await alert(page, 'You are signed out. Log in to go back to the receipt.');
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link').count()).toBe(0);
    // Nothing repaints the receipt (still loading when the session ended) over the form a moment later.
    await page.waitForTimeout(1500);
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Receipt', level: 1 }).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe(`#/receipt/${transaction.id}`);

    await logIn(page, email, PASSWORD);
    await page.getByRole('heading', { name: 'Receipt', level: 1 }).waitFor();
    await page.locator('.verdict').waitFor();
    expect(await page.locator('.verdict-head').textContent()).toContain('Verified');
    await finish(session, 'session-ended-back-to-receipt');
  });
});

describe('Settings wording', () => {
  it('says the current password is wrong (not "wrong email or password"), and the session stays', async () => {
    const session = await openSession(browser);
    const { page } = session;
    await page.goto('/');
    await signUpInPage(page, uniqueEmail('wrong-current'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    await viewShown(page, 'settings');
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill('Not-The-Password-1');
    await form.getByLabel('New password', { exact: true }).fill('Another-Sealed-2025');
    await form.getByLabel('New password again').fill('Another-Sealed-2025');
    await form.getByRole('button', { name: 'Change password' }).click();
    await alert(page, 'Your current password is not right.');
    expect(await page.getByText('Wrong email or password').count()).toBe(0);
    await viewShown(page, 'settings');
    await finish(session, 'settings-wrong-current-password');
  });
});
