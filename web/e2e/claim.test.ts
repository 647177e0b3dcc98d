/**
 * The claim flow from the letter's claim URL (the address printed on the PDF and in its QR code): account A
 * creates a letter through the API; a second browser context opens the claim URL and signs up as account B, which
 * claims in that one step into a wallet made for it, and sees the revealed amount and memo. Then the claim errors
 * in plain words, and a letter someone else claimed.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  alert,
  BASE_URL,
  captureFailures,
  createLetter,
  finish,
  launch,
  logInTab,
  openSession,
  PASSWORD,
  signUpInPage,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const sender = new ApiClient();
let senderEmail = '';
let walletId = '';

beforeAll(async () => {
  browser = await launch();
  senderEmail = uniqueEmail('sender');
  await sender.signUp(senderEmail, 'Ada Sender');
  await sender.call('PATCH', '/me', { company: 'Acme Gifts' });
  walletId = (await sender.fundedWallet('100', '60')).id;
});

afterAll(async () => {
  await browser?.close();
});

describe('claim page', () => {
  it('claims a letter from its claim URL: preview, sign up, new wallet, claim, revealed amount and memo', async () => {
    const letter = await createLetter(sender, walletId, '12.5', 'Bo Recipient', 'Happy birthday, Bo!');
    expect(letter.status).toBe('ESCROWED');
    expect(letter.claimUrl).toBe(`${BASE_URL}/claim#${letter.claimCode}`);
    expect(letter.claimCode).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){6}$/);

    const session = await openSession(browser);
    const { page } = session;
    await page.goto(letter.claimUrl);

    // The public preview: recipient, sender label, status, expiry, amount sealed.
    const preview = page.getByRole('region', { name: 'A letter of value for Bo Recipient' });
    await expect.poll(() => preview.isVisible()).toBe(true);
    await expect.poll(() => preview.textContent()).toContain('Acme Gifts');
    const text = (await preview.textContent()) ?? '';
    expect(text).toContain('Ready to claim');
    expect(text).toContain('Amount sealed');
    expect(text).toContain('Claim by');
    expect(text).not.toContain('12.5');
    // The code left the address bar (it stays in this tab's session storage).
    expect(new URL(page.url()).hash).toBe('');

    // Sign up as the recipient: a new person claims in that one step, into a wallet made as part of the claim.
    // The claim blocks up to ~20 s; here it answers within a second or two, so hold the answer back a moment to
    // see the progress indicator deterministically.
    await page.route('**/api/v1/transfer/letter/claim', async (route) => {
      const response = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.fulfill({ response });
    });
    await signUpInPage(page, uniqueEmail('recipient'), 'Bo Recipient');
    await page
      .getByRole('progressbar', { name: 'Claiming: the vault is releasing the amount to your wallet…' })
      .waitFor();
    expect(await page.getByRole('heading', { name: 'Where should the money go?' }).count()).toBe(0);

    const result = page.getByRole('region', { name: 'Claimed!' });
    await result.waitFor({ timeout: 45_000 });
    expect(await result.locator('.revealed-amount').textContent()).toBe('12.50 cSTABLE');
    expect(await result.locator('blockquote').textContent()).toBe('Happy birthday, Bo!');
    expect(await result.locator('.tx-status').textContent()).toMatch(/CONFIRMED|PENDING/);
    expect(await result.locator('.claimed-into').textContent()).toMatch(
      /^You claimed this on .+ into My wallet \(0x/,
    );

    // The sender sees the letter claimed.
    const { letter: after } = await sender.call<{ letter: { status: string; amount: string } }>(
      'GET',
      `/transfer/letter/${letter.id}`,
    );
    expect(after.status).toBe('CLAIMED');
    expect(after.amount).toBe('12.50');
    await finish(session, 'claim-flow');
  });

  it('shows every claim refusal in plain words', async () => {
    const session = await openSession(browser);
    const { page } = session;

    // A malformed code typed by hand.
    await page.goto('/claim');
    await page.getByLabel('Claim code', { exact: true }).fill('HELLO-WORLD');
    await page.getByRole('button', { name: 'Look up letter' }).click();
    await alert(page, 'This is not a valid claim code');

    // A well-formed code that matches no letter.
    await page.getByLabel('Claim code', { exact: true }).fill('ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345');
    await page.getByRole('button', { name: 'Look up letter' }).click();
    await alert(page, 'No letter matches this code');

    // A voided letter: the preview says so and offers no claim.
    const voided = await createLetter(sender, walletId, '1', 'Vi Voided');
    await sender.call('POST', `/transfer/letter/${voided.id}/void`, {});
    await page.goto(voided.claimUrl);
    await page.getByRole('region', { name: 'A letter of value for Vi Voided' }).waitFor();
    await expect.poll(() => page.locator('main').textContent()).toContain('Voided by the sender');
    expect(await page.locator('main').textContent()).toContain('can no longer be claimed');
    expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);

    // The sender logging in on their own letter's page: told it is theirs, offered no claim (the API would answer
    // cannot_claim_own_letter).
    const own = await createLetter(sender, walletId, '2', 'Own Letter');
    await page.goto(own.claimUrl);
    await page.getByRole('region', { name: 'A letter of value for Own Letter' }).waitFor();
    await logInTab(page).click();
    await page.getByLabel('Email').fill(senderEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.locator('form[aria-label="Log in"]').getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'You sent this letter' }).waitFor();
    expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Where should the money go?' }).count()).toBe(0);

    // Someone else claims it first; then a second recipient gets already_claimed.
    const other = new ApiClient();
    await other.signUp(uniqueEmail('first'));
    const { wallet } = await other.call<{ wallet: { id: string } }>('POST', '/wallets', {
      type: 'CUSTODIAL',
    });
    await other.call('POST', '/transfer/letter/claim', { claimCode: own.claimCode, walletId: wallet.id });
    await session.context.clearCookies();
    await page.goto(own.claimUrl);
    await page.getByRole('region', { name: 'A letter of value for Own Letter' }).waitFor();
    // Anyone but the claimant reads that it has been claimed: no wallet choice, no Claim button.
    await expect.poll(() => page.locator('main').textContent()).toContain('This letter has been claimed');
    expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Log in to see your claim' }).click();
    await signUpInPage(page, uniqueEmail('late'));
    await page.getByRole('heading', { name: 'This letter has been claimed' }).waitFor();
    await expect.poll(() => page.locator('main').textContent()).toContain('Someone else claimed it');
    expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
    expect(await page.getByRole('radio').count()).toBe(0);
    await finish(session, 'claim-errors');
  });
});
