/**
 * Issue 25 item 13 (and item 15's card/form agreement): the balance a Move money form checks against is read again
 * at every status change it shows, and read now when what the form holds would refuse or is not known yet. A mint
 * right after a fund is not refused with "holds 0.00"; a transfer over the available amount is refused in the form
 * (no request, no gas spent). The wallet card shows the confidential balance the form decrypted, not "sealed".
 */
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addWallet,
  alert,
  captureFailures,
  finish,
  launch,
  openSession,
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

function form(page: Page) {
  return page.getByRole('form', { name: 'Move money' });
}

function newestLine(page: Page) {
  return form(page).locator('.op-line').first();
}

/** Answers to `GET /api/v1/{path}` come `ms` late from now on (a slow read, as under load). */
async function slow(page: Page, path: string, ms: number): Promise<void> {
  await page.route(`**/api/v1/${path}*`, async (route) => {
    // The test may have moved on and closed the page meanwhile (its routes then count as handled): a late answer
    // has no one to go to.
    const response = await route.fetch().catch(() => null);
    if (!response) return;
    await new Promise((resolve) => setTimeout(resolve, ms));
    await route.fulfill({ response }).catch(() => undefined);
  });
}

describe('move money checks the balance as it is now', () => {
  it('mints right after a fund, refuses a transfer over the balance in the form, and the card agrees with the form', async () => {
    const session = await openSession(browser);
    const { page } = session;
    await page.goto('/');
    await signUpInPage(page, uniqueEmail('fresh'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await addWallet(page, 'Main');
    const posts: string[] = [];
    page.on('request', (request: Request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });

    // Fund 100; as soon as its line says confirmed, mint all of it (the public balance is read slowly).
    await form(page).getByLabel('Amount').fill('100');
    await form(page).getByRole('button', { name: 'Fund' }).click();
    await expect
      .poll(() => newestLine(page).getAttribute('data-status'), { timeout: 30_000 })
      .toBe('CONFIRMED');
    await slow(page, 'gas', 2_500);
    await form(page).getByRole('radio', { name: 'Mint' }).check();
    await form(page).getByLabel('Amount').fill('100');
    await form(page).getByRole('button', { name: 'Mint' }).click();
    await expect.poll(() => newestLine(page).textContent(), { timeout: 30_000 }).toContain('Mint of 100.00');
    expect(await form(page).getByRole('alert').count()).toBe(0);
    expect(posts.filter((p) => p === '/api/v1/mint')).toHaveLength(1);
    await expect
      .poll(() => newestLine(page).getAttribute('data-status'), { timeout: 30_000 })
      .toBe('CONFIRMED');
    await page.unroute('**/api/v1/gas*');

    // A transfer of 1,000 while the 100 cSTABLE is still being decrypted: refused in the form, nothing sent.
    await slow(page, 'balances', 2_500);
    await form(page).getByRole('radio', { name: 'Transfer' }).check();
    await form(page).getByLabel('Amount').fill('1,000');
    await form(page)
      .getByLabel('Recipient address')
      .fill(`0x${'4'.repeat(40)}`);
    await form(page).getByRole('button', { name: 'Transfer' }).click();
    await alert(page, 'The wallet holds 100.00 cSTABLE: too little to transfer 1,000.');
    expect(posts.filter((p) => p === '/api/v1/transfer')).toHaveLength(0);
    await page.unroute('**/api/v1/balances*');
    expect(await form(page).locator('.available').textContent()).toBe('Available: 100.00 cSTABLE');

    // The card shows what the form decrypted (not "sealed" beside an amount in the form).
    const card = page.getByRole('article', { name: /^Main/ });
    await expect.poll(() => card.locator('.confidential').textContent()).toContain('100.00 cSTABLE');
    expect(await card.locator('.confidential .sealed').count()).toBe(0);
    await screenshot(page, 'fresh-balance-refused-1280');

    // A transfer within it: once confirmed, the form and the card both show what is left.
    await form(page).getByLabel('Amount').fill('60');
    await form(page).getByRole('button', { name: 'Transfer' }).click();
    await expect
      .poll(() => newestLine(page).getAttribute('data-status'), { timeout: 60_000 })
      .toBe('CONFIRMED');
    await expect
      .poll(() => form(page).locator('.available').textContent(), { timeout: 20_000 })
      .toBe('Available: 40.00 cSTABLE');
    await expect.poll(() => card.locator('.confidential').textContent()).toContain('40.00 cSTABLE');
    await page.setViewportSize({ width: 375, height: 812 });
    await form(page).scrollIntoViewIfNeeded();
    await screenshot(page, 'fresh-balance-375');
    await finish(session, 'fresh-balance');
  });
});
