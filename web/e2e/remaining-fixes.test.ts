/**
 * Issue 25 item 15, the remaining points: a submission the ended session refused is said not sent, and what was
 * typed comes back after logging in again; after an outage the "not answering" line clears by itself once the
 * service answers, with the page asking less and less meanwhile; mail status in plain words; one two-factor form at a time (the
 * recovery-codes form and the turn-off form asked for the same password and code, stacked as two identical forms).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  addWallet,
  alert,
  captureFailures,
  finish,
  launch,
  notice,
  openSession,
  PASSWORD,
  screenshot,
  signedInSession,
  signUpInPage,
  totp,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const sender = new ApiClient();

beforeAll(async () => {
  browser = await launch();
  await sender.signUp(uniqueEmail('mailer'), 'Mo Mailer');
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

function viewport(width: number) {
  return { width, height: width < 600 ? 812 : 900 };
}

async function openSettings(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
}

/** The password fields of the two-factor section (visible ones). */
async function twoFactorPasswordFields(page: Page): Promise<number> {
  const section = page.getByRole('region', { name: 'Two-factor authentication' });
  return await section.locator('input[type="password"]:visible').count();
}

describe('remaining smaller fixes', () => {
  it('after an outage the “not answering” line clears by itself, and the page backs off meanwhile', async () => {
    for (const width of [1280, 375]) {
      const session = await openSession(browser, viewport(width));
      const { page } = session;
      await page.goto('/');
      await signUpInPage(page, uniqueEmail('outage'));
      await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
      await addWallet(page, 'Main');
      const form = page.getByRole('form', { name: 'Move money' });
      await form.getByRole('radio', { name: 'Fund' }).check();
      await form.getByLabel('Amount').fill('5');

      // The service stops answering: every API request fails to connect.
      let asked = 0;
      const paths: string[] = [];
      await page.route('**/api/v1/**', async (route) => {
        asked += 1;
        paths.push(new URL(route.request().url()).pathname);
        await route.abort('connectionrefused');
      });
      await form.getByRole('button', { name: 'Fund' }).click();
      const line = form.locator('.op-line').first();
      await expect
        .poll(() => line.textContent(), { timeout: 30_000 })
        .toContain('the service is not answering');
      await screenshot(page, `outage-not-answering-${width}`);
      // Meanwhile the page backs off: every poll and check runs one at a time and waits longer after each failure.
      // Counted here in requests, the client itself sending each unanswered one up to 4 times: before, the page
      // kept sending about 4 a second; now, over 24 s, well under 3 (3 s, 6 s, 12 s… between polls).
      const start = asked;
      await page.waitForTimeout(24_000);
      expect((asked - start) / 24, paths.slice(start).join(' ')).toBeLessThan(3);

      // The service answers again: without Try again, the line follows the fund to its end.
      await page.unroute('**/api/v1/**');
      await expect
        .poll(() => line.getAttribute('data-status'), { timeout: 60_000 })
        .toMatch(/^(QUEUED|PENDING|CONFIRMED)$/);
      await expect.poll(() => line.textContent(), { timeout: 30_000 }).toContain('Fund of 5.00 STABLE');
      expect(await line.textContent()).not.toContain('not answering');
      // The refused connections of the outage are logged by Chrome; nothing else may be.
      const others = session.problems.filter((problem) => !problem.includes('ERR_CONNECTION_REFUSED'));
      session.problems.splice(0, session.problems.length, ...others);
      await finish(session, `outage-cleared-${width}`);
    }
  });

  it('a session ending during a submit says the transfer was not sent and keeps what was typed', async () => {
    const to = `0x${'ab'.repeat(20)}`;
    for (const width of [1280, 375]) {
      const session = await openSession(browser, viewport(width));
      const { page, context } = session;
      const email = uniqueEmail('unsent');
      await page.goto('/');
      await signUpInPage(page, email);
      await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
      await addWallet(page, 'Spending');
      const form = page.getByRole('form', { name: 'Move money' });
      await form.getByRole('radio', { name: 'Transfer' }).check();
      await form.getByLabel('Amount').fill('1.25');
      await form.getByLabel('Recipient address').fill(to);
      await context.clearCookies();
      await form.getByRole('button', { name: 'Transfer' }).click();
      await alert(page, 'You are signed out. “Move money” was not sent. Log in to go back to Wallets.');
      await screenshot(page, `session-ended-unsent-${width}`);

      const login = page.getByRole('form', { name: 'Log in' });
      await login.getByLabel('Email').fill(email);
      await login.getByLabel('Password').fill(PASSWORD);
      await login.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
      const again = page.getByRole('form', { name: 'Move money' });
      expect(await again.getByRole('radio', { name: 'Transfer' }).isChecked()).toBe(true);
      expect(await again.getByLabel('Amount').inputValue()).toBe('1.25');
      expect(await again.getByLabel('Recipient address').inputValue()).toBe(to);
      await finish(session, `session-ended-draft-kept-${width}`);
    }
  });

  it('a mailed letter’s status is in plain words, not the provider’s “created”', async () => {
    const wallet = await sender.fundedWallet('20', '10');
    const { letter } = await sender.call<{ letter: { id: string } }>('POST', '/transfer/letter', {
      walletId: wallet.id,
      amount: '2',
      recipient: {
        name: 'Pat Post',
        address: { line1: '5 Elm Street', city: 'Austin', region: 'TX', postal: '73301', country: 'US' },
      },
      claimOrigin: 'https://pay.example.com',
    });
    await sender.call('POST', `/transfer/letter/${letter.id}/mail`, { deliveryMethod: 'standard' });
    for (const width of [1280, 375]) {
      const session = await signedInSession(browser, sender, viewport(width));
      const { page } = session;
      await page.goto('/#/letters');
      const mail = page.getByRole('article', { name: 'To Pat Post' }).locator('dd.mail');
      await mail.waitFor();
      const text = (await mail.textContent()) ?? '';
      expect(text).toContain('Standard · accepted by the printer, not yet posted');
      expect(text).not.toMatch(/\bcreated\b/);
      await finish(session, `mail-status-words-${width}`);
    }
  });

  it('two-factor settings show one password-and-code form at a time, also after revisiting Settings', async () => {
    for (const width of [1280, 375]) {
      const session = await openSession(browser, viewport(width));
      const { page } = session;
      await page.goto('/');
      await signUpInPage(page, uniqueEmail('totp-once'));
      await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
      await openSettings(page);
      await page.getByRole('button', { name: 'Set up two-factor' }).click();
      const secret = (await page.locator('.totp-secret').textContent()) ?? '';
      await page.getByLabel('6-digit code shown by the app').fill(totp(secret));
      await page.getByRole('button', { name: 'Turn on two-factor' }).click();
      await notice(page, 'Two-factor authentication is on.');
      // The code just used may not be used again: turning off later takes a recovery code.
      const codes = await page
        .getByRole('region', { name: 'Recovery codes' })
        .locator('.recovery-codes code')
        .allTextContents();
      expect(await twoFactorPasswordFields(page)).toBe(0);

      // Revisit Settings: still no stacked forms, and each action opens its own, one at a time.
      await page.getByRole('link', { name: 'Wallets' }).click();
      await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
      await openSettings(page);
      await page.getByText('Recovery codes left: 10.').waitFor();
      expect(await twoFactorPasswordFields(page)).toBe(0);
      await page.getByRole('button', { name: 'New recovery codes…' }).click();
      expect(await twoFactorPasswordFields(page)).toBe(1);
      await page.getByRole('button', { name: 'Turn off two-factor…' }).click();
      expect(await twoFactorPasswordFields(page)).toBe(1);
      const form = page.getByRole('form', { name: 'Turn off two-factor authentication' });
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByLabel('Current 6-digit code or a recovery code').fill(codes[0] ?? '');
      await form.getByRole('button', { name: 'Turn off two-factor' }).click();
      await notice(page, 'Two-factor authentication is off.');
      await page.getByRole('button', { name: 'Set up two-factor' }).waitFor();
      await finish(session, `two-factor-one-form-${width}`);
    }
  });
});
