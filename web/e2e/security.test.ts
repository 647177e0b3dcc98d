/** Settings: TOTP enrollment and two-step login, passkey registration and login, API keys and their scopes. */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addWallet,
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

async function logInWithPassword(page: Page, email: string): Promise<void> {
  await logInTab(page).click();
  const form = page.getByRole('form', { name: 'Log in' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(PASSWORD);
  await form.getByRole('button', { name: 'Log in' }).click();
}

describe('security settings', () => {
  it('enrolls TOTP with a generated code, then logs in with password and code', async () => {
    const session = await openSession(browser);
    const { page } = session;
    const email = uniqueEmail('totp');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await page.locator('.totp-secret').textContent()) ?? '';
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).isVisible()).toBe(
      true,
    );
    await page.getByLabel('6-digit code shown by the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await notice(page, 'Two-factor authentication is on.');

    await logOut(page);
    await logInWithPassword(page, email);
    const code = page.getByLabel('6-digit code from your authenticator app');
    await code.waitFor();
    // A wrong code first: refused in plain words.
    await code.fill('000000' === totp(secret, 1) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is wrong or has expired' }).waitFor();
    // The next step's code (the enrolment used this step's; a code is accepted once).
    await code.fill(totp(secret, 1));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    expect(await page.locator('.who').textContent()).toBe(email);
    await finish(session, 'totp');
  });

  it('registers a passkey with a virtual authenticator and logs in with it', async () => {
    const session = await openSession(browser);
    const { page, context } = session;
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });
    const email = uniqueEmail('passkey');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByLabel('Passkey name').fill('Virtual key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await notice(page, 'Passkey added.');
    await page.locator('ul.passkeys li').filter({ hasText: 'Virtual key' }).waitFor();
    const { credentials } = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as {
      credentials: { isResidentCredential: boolean }[];
    };
    expect(credentials).toHaveLength(1);

    await logOut(page);
    await logInTab(page).click();
    await page.getByRole('button', { name: 'Log in with a passkey' }).click();
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    expect(await page.locator('.who').textContent()).toBe(email);
    await finish(session, 'passkey');
  });

  it('creates an API key, shows it once with a copy button, and revokes it', async () => {
    const session = await openSession(browser);
    const { page } = session;
    const email = uniqueEmail('keys');
    await page.goto('/');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await openSettings(page);
    await page.getByLabel('Key name', { exact: true }).fill('billing server');
    await page.getByLabel('Expires after (days, optional)').fill('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const panel = page.getByRole('region', { name: 'New key “billing server”' });
    await panel.waitFor();
    const plaintext = (await panel.locator('.secret-key').textContent()) ?? '';
    expect(plaintext).toMatch(/^svc_sk_/);
    expect(await panel.getByRole('button', { name: 'Copy key' }).isVisible()).toBe(true);

    // The key works against the API and belongs to this account.
    const me = await fetch(`${BASE_URL}/api/v1/me`, { headers: { authorization: `Bearer ${plaintext}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { user: { email: string } } }).data.user.email).toBe(email);

    const row = page.locator('table.keys tr').filter({ hasText: 'billing server' });
    await row.waitFor();
    expect(await row.textContent()).not.toContain(plaintext);
    await screenshot(page, 'api-key-created');
    await row.getByRole('button', { name: 'Revoke API key billing server' }).click();
    await row.getByRole('button', { name: 'Yes, revoke API key billing server' }).click();
    await notice(page, 'revoked');
    const after = await fetch(`${BASE_URL}/api/v1/me`, { headers: { authorization: `Bearer ${plaintext}` } });
    expect(after.status).toBe(401);
    await finish(session, 'api-keys');
  });

  it('creates a read-only key and a key bound to one wallet with a daily limit, and lists their scopes', async () => {
    const session = await openSession(browser);
    const { page } = session;
    await page.goto('/');
    await signUpInPage(page, uniqueEmail('scopes'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await addWallet(page, 'Payroll');
    await addWallet(page, 'Savings');
    await openSettings(page);
    const form = page.getByRole('form', { name: 'Create an API key' });

    await form.getByLabel('Key name', { exact: true }).fill('reporting');
    await form.getByLabel('Read-only: read everything, change nothing').check();
    expect(await form.getByLabel('Spend limit per 24 hours (cSTABLE, optional)').isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Create key' }).click();
    const readOnly = page.getByRole('region', { name: 'New key “reporting”' });
    await readOnly.waitFor();
    const readOnlyKey = (await readOnly.locator('.secret-key').textContent()) ?? '';
    const refused = await fetch(`${BASE_URL}/api/v1/wallets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readOnlyKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'CUSTODIAL' }),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_scope');

    await form.getByLabel('Key name', { exact: true }).fill('payroll runner');
    await form.getByLabel('Only the wallets ticked below').check();
    // None ticked: the form says so and sends nothing.
    await form.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Tick at least one wallet, or choose every wallet.').waitFor();
    await form.getByLabel('Payroll', { exact: true }).check();
    await form.getByLabel('Spend limit per 24 hours (cSTABLE, optional)').fill('10');
    await form.getByRole('button', { name: 'Create key' }).click();
    const bound = page.getByRole('region', { name: 'New key “payroll runner”' });
    await bound.waitFor();
    const boundKey = (await bound.locator('.secret-key').textContent()) ?? '';
    const wallets = await fetch(`${BASE_URL}/api/v1/wallets`, {
      headers: { authorization: `Bearer ${boundKey}` },
    });
    const listed = ((await wallets.json()) as { data: { wallets: { label: string }[] } }).data.wallets;
    expect(listed.map((wallet) => wallet.label)).toEqual(['Payroll']);

    const rows = page.locator('table.keys tr');
    await rows.filter({ hasText: 'payroll runner' }).waitFor();
    expect(await rows.filter({ hasText: 'reporting' }).textContent()).toContain('Read-only, every wallet');
    expect(await rows.filter({ hasText: 'payroll runner' }).textContent()).toContain(
      'Full, Payroll; 10.00 per 24 hours, 0.00 used',
    );
    await screenshot(page, 'api-key-scopes');
    await finish(session, 'api-key-scopes');
  });
});
