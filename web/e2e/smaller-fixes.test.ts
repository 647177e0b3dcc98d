/**
 * Issue 25 item 15, the smaller ones done here: a voided letter's claim page does not say "Claim by …"; the
 * first-run guide names the section it points at ("Add a wallet") instead of "below"; "Mail it" asks first (where,
 * how, who charges the postage) and sends nothing until confirmed; a sender opening their own letter's claim link is
 * told it is theirs instead of being offered the claim form.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  createLetter,
  finish,
  launch,
  logInTab,
  notice,
  openSession,
  PASSWORD,
  screenshot,
  signedInSession,
  signUpInPage,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const sender = new ApiClient();
const senderEmail = uniqueEmail('voider');

beforeAll(async () => {
  browser = await launch();
  await sender.signUp(senderEmail, 'Vic Voider');
}, 120_000);

/** A letter whose claim link is public https (only those can be mailed), as the API answers it. */
async function mailableLetter(walletId: string, name: string): Promise<{ id: string }> {
  const { letter } = await sender.call<{ letter: { id: string } }>('POST', '/transfer/letter', {
    walletId,
    amount: '1.5',
    recipient: {
      name,
      address: { line1: '5 Elm Street', city: 'Austin', region: 'TX', postal: '73301', country: 'US' },
    },
    claimOrigin: 'https://pay.example.com',
  });
  return letter;
}

async function letterStatus(
  id: string,
): Promise<{ status: string; mail: { deliveryMethod: string } | null }> {
  return (
    await sender.call<{ letter: { status: string; mail: { deliveryMethod: string } | null } }>(
      'GET',
      `/transfer/letter/${id}`,
    )
  ).letter;
}
afterAll(async () => {
  await browser?.close();
});

describe('smaller fixes', () => {
  it('a voided letter’s claim page gives no claim deadline', async () => {
    const wallet = await sender.fundedWallet('20', '10');
    const letter = await createLetter(sender, wallet.id, '2', 'Una Void');
    await sender.call('POST', `/transfer/letter/${letter.id}/void`, {});
    for (const width of [1280, 375]) {
      const session = await openSession(browser, { width, height: width < 600 ? 812 : 900 });
      const { page } = session;
      await page.goto(letter.claimUrl);
      const preview = page.getByRole('region', { name: 'A letter of value for Una Void' });
      await preview.waitFor();
      await page.getByText('can no longer be claimed').waitFor();
      const text = (await preview.textContent()) ?? '';
      expect(text).not.toContain('Claim by');
      await finish(session, `claim-voided-${width}`);
    }
  });

  it('the first-run guide names the section it points at, which is there', async () => {
    for (const width of [1280, 375]) {
      const session = await openSession(browser, { width, height: width < 600 ? 812 : 900 });
      const { page } = session;
      await page.goto('/');
      await signUpInPage(page, uniqueEmail('guide'));
      const guide = page.locator('.first-run, [aria-label*="Getting started"], section').filter({
        hasText: 'Fund a wallet',
      });
      await guide.first().waitFor();
      const text = (await guide.first().textContent()) ?? '';
      expect(text).not.toMatch(/\bbelow\b|\babove\b/);
      expect(text).toContain('“Add a wallet”');
      await page.getByRole('heading', { name: 'Add a wallet', level: 2 }).waitFor();
      await screenshot(page, `first-run-guide-${width}`);
      await finish(session, `first-run-guide-words-${width}`);
    }
  });

  it('“Mail it” asks first, says where, how and who charges the postage, and sends nothing until confirmed', async () => {
    const wallet = await sender.fundedWallet('20', '10', 'Mailing wallet');
    for (const width of [1280, 375]) {
      const name = `Mo Mail ${width}`;
      const letter = await mailableLetter(wallet.id, name);
      const session = await signedInSession(browser, sender, { width, height: width < 600 ? 812 : 900 });
      const { page } = session;
      await page.goto('/#/letters');
      const card = page.getByRole('article', { name: `To ${name}` });
      await card.getByRole('button', { name: 'Mail it' }).click();
      const confirm = card.getByRole('form', { name: `Confirm mailing the letter for ${name}` });
      await confirm.waitFor();
      const text = (await confirm.textContent()) ?? '';
      expect(text).toContain(`posted to ${name}, 5 Elm Street, Austin, TX, 73301`);
      expect(text).toContain('Postage: charged by the print provider');
      await screenshot(page, `mail-confirm-${width}`);
      // Opening the confirmation sent nothing; "Not now" sends nothing either.
      await card.getByRole('button', { name: 'Not now' }).click();
      await card.getByRole('button', { name: 'Mail it' }).waitFor();
      expect((await letterStatus(letter.id)).status).toBe('ESCROWED');

      await card.getByRole('button', { name: 'Mail it' }).click();
      await confirm.getByLabel('Delivery').selectOption('tracked');
      await confirm.getByRole('button', { name: 'Send to the printer' }).click();
      await notice(page, 'sent to the printer');
      const after = await letterStatus(letter.id);
      expect(after.status).toBe('MAILED');
      expect(after.mail?.deliveryMethod).toBe('tracked');
      await finish(session, `mail-confirmed-${width}`);
    }
  });

  it('the sender opening their own letter’s claim link is told it is theirs, with no claim form', async () => {
    const wallet = await sender.fundedWallet('20', '10', 'Own wallet');
    const letter = await createLetter(sender, wallet.id, '1', 'Ora Own');
    const stranger = new ApiClient();
    await stranger.signUp(uniqueEmail('stranger'));
    for (const width of [1280, 375]) {
      const viewport = { width, height: width < 600 ? 812 : 900 };
      // Signed in as the sender already, with a session of its own (the page logs it out below).
      const senderAgain = new ApiClient();
      await senderAgain.call('POST', '/auth/login', { email: senderEmail, password: PASSWORD });
      const session = await signedInSession(browser, senderAgain, viewport);
      const { page } = session;
      await page.goto(letter.claimUrl);
      await page.getByRole('region', { name: 'A letter of value for Ora Own' }).waitFor();
      const own = page.getByRole('region', { name: 'You sent this letter' });
      await own.waitFor();
      expect(await own.textContent()).toContain('Only the recipient can claim it');
      expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
      expect(await page.getByRole('heading', { name: 'Where should the money go?' }).count()).toBe(0);
      await screenshot(page, `claim-own-letter-${width}`);
      // The recipient at the sender's computer: log out, and the page asks who is claiming.
      await own.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('heading', { name: 'Who is claiming?' }).waitFor();
      expect(await page.getByRole('region', { name: 'You sent this letter' }).count()).toBe(0);
      await finish(session, `claim-own-letter-logged-out-${width}`);
    }
    // Logging in from the claim page as the sender leads to the same answer, not the wallet choice.
    const fresh = await openSession(browser);
    await fresh.page.goto(letter.claimUrl);
    await logInTab(fresh.page).click();
    await fresh.page.getByLabel('Email').fill(senderEmail);
    await fresh.page.getByLabel('Password').fill(PASSWORD);
    await fresh.page.locator('form[aria-label="Log in"]').getByRole('button', { name: 'Log in' }).click();
    await fresh.page.getByRole('region', { name: 'You sent this letter' }).waitFor();
    await finish(fresh, 'claim-own-letter-after-login');
    // Anyone else signed in gets the claim form.
    const other = await signedInSession(browser, stranger);
    await other.page.goto(letter.claimUrl);
    await other.page.getByRole('heading', { name: 'Where should the money go?' }).waitFor();
    expect(await other.page.getByRole('region', { name: 'You sent this letter' }).count()).toBe(0);
    await finish(other, 'claim-own-letter-stranger');
  });
});
