/**
 * Issue 25 item 12: "Use an address you already own" on the claim page really pays that address. An address typed
 * there and then Claim, or added with "Add this address" (the added wallet is then the one selected), receives the
 * letter; the custodial wallet the account already has does not. The result names the receiving address.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  createLetter,
  finish,
  launch,
  screenshot,
  signedInSession,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const sender = new ApiClient();
const claimer = new ApiClient();
let senderWallet = '';

beforeAll(async () => {
  browser = await launch();
  await sender.signUp(uniqueEmail('own-sender'), 'Sam Sender');
  senderWallet = (await sender.fundedWallet('100', '50')).id;
  await claimer.signUp(uniqueEmail('own-claimer'), 'Cleo Claimer');
  // The claimer already has a custodial wallet (the primary one, selected by default).
  await claimer.call('POST', '/wallets', { type: 'CUSTODIAL', label: 'Spending' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/** Where the letter's claim went, as the service recorded it. */
async function claimedInto(code: string): Promise<string> {
  const { letter } = await claimer.call<{ letter: { claim: { walletAddress: string } | null } }>(
    'GET',
    `/transfer/letter/claim?code=${encodeURIComponent(code)}`,
  );
  return letter.claim?.walletAddress ?? '';
}

async function openOwnAddress(page: Page, claimUrl: string): Promise<void> {
  await page.goto(claimUrl);
  await page.getByRole('heading', { name: 'Where should the money go?' }).waitFor();
  await page.getByText('Use an address you already own instead').click();
}

describe('claim into an address you already own', () => {
  it('pays the address typed there when Claim is pressed, and names it in the result', async () => {
    const letter = await createLetter(sender, senderWallet, '4', 'Cleo Claimer');
    const own = `0x${randomBytes(20).toString('hex')}`;
    const session = await signedInSession(browser, claimer);
    const { page } = session;
    await openOwnAddress(page, letter.claimUrl);
    await page.getByLabel('Your address').fill(own);
    await screenshot(page, 'claim-own-address-typed-1280');
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    const result = page.locator('section.result');
    await result.waitFor({ timeout: 60_000 });
    await expect
      .poll(async () => ((await result.locator('.into-address').textContent()) ?? '').toLowerCase())
      .toContain(own);
    expect((await claimedInto(letter.claimCode)).toLowerCase()).toBe(own.toLowerCase());
    await screenshot(page, 'claim-own-address-result-1280');
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await screenshot(page, 'claim-own-address-result-375');
    await finish(session, 'claim-own-address-typed');
  });

  it('selects the address added with "Add this address" and pays it', async () => {
    const letter = await createLetter(sender, senderWallet, '3', 'Cleo Claimer');
    const own = `0x${randomBytes(20).toString('hex')}`;
    const session = await signedInSession(browser, claimer, { width: 375, height: 812 });
    const { page } = session;
    await openOwnAddress(page, letter.claimUrl);
    await page.getByLabel('Your address').fill(own);
    await page.getByRole('button', { name: 'Add this address' }).click();
    const added = page.getByRole('radio', { name: new RegExp(`External address .*${own.slice(-4)}`, 'i') });
    await added.waitFor();
    expect(await added.isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: /Spending/ }).isChecked()).toBe(false);
    await screenshot(page, 'claim-own-address-added-375');
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    const result = page.locator('section.result');
    await result.waitFor({ timeout: 60_000 });
    await expect
      .poll(async () => ((await result.locator('.into-address').textContent()) ?? '').toLowerCase())
      .toContain(own);
    expect((await claimedInto(letter.claimCode)).toLowerCase()).toBe(own.toLowerCase());
    await screenshot(page, 'claim-own-address-result-added-375');
    await page.setViewportSize({ width: 1280, height: 900 });
    await screenshot(page, 'claim-own-address-result-added-1280');
    await finish(session, 'claim-own-address-added');
  });
});
