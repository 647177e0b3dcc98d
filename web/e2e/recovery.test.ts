/** Account recovery: a recovery code in place of the lost phone, and a forgotten password reset through the mailbox. */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE_URL,
  captureFailures,
  finish,
  launch,
  logInTab,
  logOut,
  notice,
  openSession,
  PASSWORD,
  screenshot,
  signUpInPage,
  totp,
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

async function openSettings(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
}

async function passwordStep(page: Page, email: string, password: string): Promise<void> {
  const form = page.getByRole('form', { name: 'Log in' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Log in' }).click();
}

describe('account recovery', () => {
  it('shows ten recovery codes once at TOTP enrollment; one logs in in place of the lost phone, once', async () => {
    const session = await openSession(browser);
    const { page } = session;
    const email = uniqueEmail('recovery');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await page.locator('.totp-secret').textContent()) ?? '';
    await page.getByLabel('6-digit code shown by the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await notice(page, 'Two-factor authentication is on.');
    const panel = page.getByRole('region', { name: 'Recovery codes' });
    await panel.waitFor();
    const codes = await panel.locator('.recovery-codes code').allTextContents();
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    expect(await panel.getByRole('button', { name: 'Copy codes' }).isVisible()).toBe(true);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      panel.getByRole('button', { name: 'Download codes' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('sealpay-recovery-codes.txt');
    await screenshot(page, 'recovery-codes');

    // The phone is lost: log in with a recovery code.
    await logOut(page);
    await logInTab(page).click();
    await passwordStep(page, email, PASSWORD);
    await page.getByRole('button', { name: 'Lost your device? Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(codes[0] as string);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    expect(await page.locator('.who').textContent()).toBe(email);

    // The same code a second time: refused.
    await logOut(page);
    await logInTab(page).click();
    await passwordStep(page, email, PASSWORD);
    await page.getByRole('button', { name: 'Lost your device? Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(codes[0] as string);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is wrong or has expired' }).waitFor();
    // Another code of the set still works, and Settings counts what is left.
    await page.getByLabel('Recovery code').fill(codes[1] as string);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByText('Recovery codes left: 8.').waitFor();
    await finish(session, 'recovery-code');
  });

  it('after ten failed logins says what to do; the emailed link in the local mailbox resets the password', async () => {
    const session = await openSession(browser);
    const { page } = session;
    const email = uniqueEmail('reset');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await logOut(page);
    await logInTab(page).click();
    for (let attempt = 1; attempt <= 10; attempt++) {
      await passwordStep(page, email, `Wrong-Password-${attempt}`);
      const words =
        attempt < 10
          ? 'Wrong email or password.'
          : 'Too many attempts: wait 15 minutes or reset your password.';
      await page.getByRole('alert').filter({ hasText: words }).waitFor();
    }
    await screenshot(page, 'lockout');

    await page.getByRole('button', { name: 'Forgot password?' }).click();
    const forgot = page.getByRole('form', { name: 'Reset your password' });
    await forgot.getByLabel('Email').fill(email);
    await forgot.getByRole('button', { name: 'Email me a reset link' }).click();
    await notice(page, 'a reset link is on its way');

    // The local mailbox page shows the message the worker sent.
    await page.goto('/#/mailbox');
    await page.getByRole('heading', { name: 'Local mailbox', level: 1 }).waitFor();
    const message = page
      .getByRole('article')
      .filter({ hasText: email })
      .filter({ hasText: 'Reset your sealpay password' });
    for (let i = 0; i < 20 && (await message.count()) === 0; i++) {
      await page.waitForTimeout(500);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
    const text = (await message.first().locator('pre').textContent()) ?? '';
    const link = /https?:\/\/\S+#\/reset-password\?token=\S+/.exec(text)?.[0];
    expect(link).toBeDefined();

    await page.goto(link as string);
    const reset = page.getByRole('form', { name: 'Choose a new password' });
    await reset.getByLabel('New password', { exact: true }).fill('Recovered-Password-42');
    await reset.getByLabel('New password again').fill('Recovered-Password-42');
    await reset.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password is changed.').waitFor();
    expect(new URL(page.url()).hash).toBe('');
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await passwordStep(page, email, 'Recovered-Password-42');
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    expect(await page.locator('.who').textContent()).toBe(email);

    // The link worked once.
    await page.goto(link as string);
    const again = page.getByRole('form', { name: 'Choose a new password' });
    await again.getByLabel('New password', { exact: true }).fill('Another-Password-43');
    await again.getByLabel('New password again').fill('Another-Password-43');
    await again.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('alert').filter({ hasText: 'This reset link is not valid any more' }).waitFor();
    await finish(session, 'password-reset');
    // The ten failures locked out this machine's address for every other account until the window ends (a reset
    // re-admits only its own account): the test clock moves past the window, so the files after this one log in.
    const moved = await fetch(`${BASE_URL}/api/v1/sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sweep-secret': process.env.E2E_SWEEP_SECRET ?? '' },
      body: JSON.stringify({ advanceSeconds: 15 * 60 + 1 }),
    });
    expect(moved.status).toBe(200);
  });

  it('renames and removes a passkey', async () => {
    const session = await openSession(browser);
    const { page, context } = session;
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    await page.goto('/');
    await signUpInPage(page, uniqueEmail('passkey-manage'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByLabel('Passkey name').fill('Old laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await notice(page, 'Passkey added.');
    await page.getByRole('button', { name: 'Rename passkey Old laptop' }).click();
    await page.getByLabel('New name').fill('Stolen laptop');
    await page.getByRole('button', { name: 'Save name' }).click();
    await notice(page, 'Passkey renamed.');
    await page.locator('ul.passkeys li').filter({ hasText: 'Stolen laptop' }).waitFor();
    await page.getByRole('button', { name: 'Remove passkey Stolen laptop' }).click();
    await page.getByRole('button', { name: 'Yes, remove passkey Stolen laptop' }).click();
    await notice(page, 'it can no longer log in');
    await page.getByText('No passkeys yet.').waitFor();
    await finish(session, 'passkey-manage');
  });
});
