/** Readable at 375 px: no horizontal scrolling on the dashboard, the letters view and the claim page. */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  createLetter,
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

async function noHorizontalScroll(page: Page): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width).toBeLessThanOrEqual(375);
}

describe('small screens', () => {
  it('keeps the dashboard, letters and claim page within 375 px, and works from the keyboard', async () => {
    const sender = new ApiClient();
    await sender.signUp(uniqueEmail('small-sender'), 'Sam Sender');
    const wallet = await sender.fundedWallet('20', '10');
    const letter = await createLetter(sender, wallet.id, '4', 'Kim Small');

    const session = await openSession(browser, { width: 375, height: 812 });
    const { page } = session;
    await page.goto('/');
    // Keyboard: the skip link comes first and is visible when focused.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(new URL(page.url()).hash).toBe('');
    await signUpInPage(page, uniqueEmail('small'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Add a wallet' });
    await form.getByLabel('Label (optional)').fill('Phone wallet');
    // Submit from the keyboard.
    await form.getByRole('button', { name: 'Create wallet' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('article', { name: /^Phone wallet/ }).waitFor();
    await noHorizontalScroll(page);
    await screenshot(page, 'dashboard-375');

    await page.goto('/#/letters');
    await page.getByRole('heading', { name: 'Letters of value', level: 1 }).waitFor();
    await noHorizontalScroll(page);
    await screenshot(page, 'letters-375');

    await page.goto('/#/settings');
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await noHorizontalScroll(page);
    await screenshot(page, 'settings-375');

    await page.goto(letter.claimUrl);
    await page.getByRole('region', { name: 'A letter of value for Kim Small' }).waitFor();
    await page.getByRole('heading', { name: 'Where should the money go?' }).waitFor();
    await noHorizontalScroll(page);
    await finish(session, 'claim-375');
  });
});
