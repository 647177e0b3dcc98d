/** Money received shows as `in` in Activity (and the sender's side as `out`); Settings registers a webhook. */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addWallet,
  captureFailures,
  finish,
  launch,
  move,
  notice,
  openSession,
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

function row(page: Page, direction: 'in' | 'out', type: string, amount: string) {
  return page
    .locator(`tr[data-status="CONFIRMED"][data-direction="${direction}"][data-type="${type}"]`)
    .filter({ hasText: amount })
    .first();
}

describe('account events', () => {
  it('shows a transfer as out from one wallet and in to the other, and adds a webhook that gets a test event', async () => {
    const session = await openSession(browser);
    const { page } = session;
    await page.goto('/');
    await signUpInPage(page, uniqueEmail('events'), 'Eve Events');
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await addWallet(page, 'Main');
    await addWallet(page, 'Savings');
    const savingsAddress =
      (await page
        .getByRole('article', { name: /^Savings/ })
        .locator('code')
        .textContent()) ?? '';
    await move(page, 'Fund', 'Main', '50');
    await row(page, 'out', 'FUND', '50.00').waitFor({ timeout: 60_000 });
    await move(page, 'Mint', 'Main', '20');
    await row(page, 'out', 'MINT', '20.00').waitFor({ timeout: 60_000 });
    await move(page, 'Transfer', 'Main', '7.5', savingsAddress);
    await row(page, 'out', 'TRANSFER', '7.50').waitFor({ timeout: 60_000 });
    const received = row(page, 'in', 'TRANSFER', '7.50');
    await received.waitFor({ timeout: 60_000 });
    expect(await received.textContent()).toContain('↓');
    // From one's own wallet: named, not its address (issue 36 item 13).
    expect(await received.textContent()).toContain('Received from Main');
    expect(await received.textContent()).toContain('+7.50 cSTABLE');

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Add a webhook endpoint' });
    await form.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks');
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.locator('code.secret-key').last().textContent()).toMatch(/^whsec_/);
    const endpoint = page.getByRole('article', { name: 'http://127.0.0.1:9/hooks' });
    await endpoint.getByRole('button', { name: /Send a test event/ }).click();
    await notice(page, 'Test event queued');
    await endpoint.locator('tr').filter({ hasText: 'webhook.test' }).first().waitFor();
    await finish(session, 'account-events');
  });
});
