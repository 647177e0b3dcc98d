/**
 * The claim page for a letter that has been claimed (issue 16 item 7): its claimant sees "You claimed this on …
 * into …" with the revealed amount; anyone else "This letter has been claimed"; neither ever gets a wallet choice
 * or a Claim button. And a new person claims in one step, the wallet made as part of the claim.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  createLetter,
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
const sender = new ApiClient();
let walletId = '';

beforeAll(async () => {
  browser = await launch();
  await sender.signUp(uniqueEmail('claimed-sender'), 'Cy Sender');
  walletId = (await sender.fundedWallet('60', '40')).id;
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** Nothing on the page offers to claim: no wallet choice, no Claim button. */
async function offersNoClaim(page: Page): Promise<void> {
  expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
  expect(await page.getByRole('radio').count()).toBe(0);
  expect(await page.getByRole('heading', { name: 'Where should the money go?' }).count()).toBe(0);
}

async function logIn(page: Page, email: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.locator('form[aria-label="Log in"]').getByRole('button', { name: 'Log in' }).click();
}

describe('a claimed letter on the claim page', () => {
  it('claims for a new person in one step, then shows the claimant their claim and anyone else only that it is claimed', async () => {
    const letter = await createLetter(sender, walletId, '6.4', 'Noa Newcomer', 'Welcome, Noa');
    const claimantEmail = uniqueEmail('newcomer');

    // A new person: signing up is the one step; the wallet is made as part of the claim, no choice asked.
    const first = await openSession(browser);
    await first.page.goto(letter.claimUrl);
    await first.page.getByRole('region', { name: 'A letter of value for Noa Newcomer' }).waitFor();
    await signUpInPage(first.page, claimantEmail, 'Noa Newcomer');
    const result = first.page.getByRole('region', { name: 'Claimed!' });
    await result.waitFor({ timeout: 45_000 });
    expect(await result.locator('.revealed-amount').textContent()).toBe('6.40 cSTABLE');
    expect(await result.locator('.claimed-into').textContent()).toMatch(
      /^You claimed this on .+ into My wallet \(0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4}\)\.$/,
    );
    await offersNoClaim(first.page);
    // Exactly one wallet was made.
    const claimant = new ApiClient();
    await claimant.call('POST', '/auth/login', { email: claimantEmail, password: PASSWORD });
    const { wallets } = await claimant.call<{ wallets: { id: string; label: string; address: string }[] }>(
      'GET',
      '/wallets',
    );
    expect(wallets.map((w) => w.label)).toEqual(['My wallet']);
    await screenshot(first.page, 'claim-one-step-1280');

    // The claimant opens the letter again: their claim, not a claim form.
    await first.page.goto('about:blank');
    await first.page.goto(letter.claimUrl);
    const mine = first.page.getByRole('region', { name: 'You claimed this letter' });
    await mine.waitFor();
    const text = (await mine.textContent()) ?? '';
    expect(text).toContain('You claimed this on');
    expect(text).toContain(`into My wallet (${wallets[0]?.address.slice(0, 6)}`);
    expect(await mine.locator('.revealed-amount').textContent()).toBe('6.40 cSTABLE');
    expect(await mine.locator('blockquote').textContent()).toBe('Welcome, Noa');
    expect(
      await first.page.getByRole('region', { name: 'A letter of value for Noa Newcomer' }).textContent(),
    ).toContain('Claimed');
    await offersNoClaim(first.page);
    await finish(first, 'claimed-letter-claimant-1280');

    // Someone else, not signed in: that it has been claimed, nothing to claim with.
    const other = await openSession(browser, { width: 375, height: 812 });
    await other.page.goto(letter.claimUrl);
    await other.page.getByRole('region', { name: 'A letter of value for Noa Newcomer' }).waitFor();
    await other.page.getByRole('heading', { name: 'This letter has been claimed' }).waitFor();
    await offersNoClaim(other.page);
    expect(await other.page.locator('main').textContent()).not.toContain('6.40');
    expect(await other.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await screenshot(other.page, 'claimed-letter-anyone-375');

    // Someone else, signed in (the sender too): still only that it has been claimed.
    await other.page.getByRole('button', { name: 'Log in to see your claim' }).click();
    await signUpInPage(other.page, uniqueEmail('stranger'));
    await other.page.getByRole('heading', { name: 'This letter has been claimed' }).waitFor();
    await expect.poll(() => other.page.locator('main').textContent()).toContain('Someone else claimed it');
    await offersNoClaim(other.page);
    expect(await other.page.locator('main').textContent()).not.toContain('6.40');
    await finish(other, 'claimed-letter-stranger-375');
  });

  it('shows the claimant their claim after logging in on another device, at 375 px', async () => {
    const letter = await createLetter(sender, walletId, '1.75', 'Lou Later');
    const claimant = new ApiClient();
    const email = uniqueEmail('later');
    await claimant.signUp(email);
    const { wallet } = await claimant.call<{ wallet: { id: string } }>('POST', '/wallets', {
      type: 'CUSTODIAL',
      label: 'Everyday',
    });
    await claimant.call('POST', '/transfer/letter/claim', {
      claimCode: letter.claimCode,
      walletId: wallet.id,
    });

    const session = await openSession(browser, { width: 375, height: 812 });
    const { page } = session;
    await page.goto(letter.claimUrl);
    await page.getByRole('heading', { name: 'This letter has been claimed' }).waitFor();
    await offersNoClaim(page);
    await page.getByRole('button', { name: 'Log in to see your claim' }).click();
    await logIn(page, email);
    const mine = page.getByRole('region', { name: 'You claimed this letter' });
    await mine.waitFor();
    expect(await mine.locator('.claimed-into').textContent()).toMatch(
      /^You claimed this on .+ into Everyday \(0x/,
    );
    expect(await mine.locator('.revealed-amount').textContent()).toBe('1.75 cSTABLE');
    await offersNoClaim(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await finish(session, 'claimed-letter-claimant-375');
  });

  it('lets a signed-in person with wallets claim into a new wallet made as part of the claim', async () => {
    const letter = await createLetter(sender, walletId, '2', 'Max Many');
    const person = new ApiClient();
    await person.signUp(uniqueEmail('many'));
    await person.call('POST', '/wallets', { type: 'CUSTODIAL', label: 'Old wallet' });
    const session = await openSession(browser);
    const { page } = session;
    const [name, value] = person.cookie.split('=');
    await session.context.addCookies([
      { name: name ?? '', value: value ?? '', url: new URL(letter.claimUrl).origin },
    ]);
    await page.goto(letter.claimUrl);
    await page.getByRole('heading', { name: 'Where should the money go?' }).waitFor();
    await page.getByRole('radio', { name: /A new wallet/ }).check();
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    const result = page.getByRole('region', { name: 'Claimed!' });
    await result.waitFor({ timeout: 45_000 });
    expect(await result.locator('.claimed-into').textContent()).toMatch(/into Wallet 2 \(0x/);
    const { wallets } = await person.call<{ wallets: { label: string }[] }>('GET', '/wallets');
    expect(wallets.map((w) => w.label).sort()).toEqual(['Old wallet', 'Wallet 2']);
    await finish(session, 'claim-into-new-wallet');
  });
});
