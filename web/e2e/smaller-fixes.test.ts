/**
 * Issue 25 item 15, the smaller ones done here: a voided letter's claim page does not say "Claim by …"; the
 * first-run guide names the section it points at ("Add a wallet") instead of "below".
 */
import type { Browser } from 'playwright-core';
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
const sender = new ApiClient();

beforeAll(async () => {
  browser = await launch();
  await sender.signUp(uniqueEmail('voider'), 'Vic Voider');
}, 120_000);
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
});
