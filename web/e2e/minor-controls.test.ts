/**
 * Issue 36 item 13, the controls: Escape closes the mail and void confirmations; the mailbox's reset link is a link;
 * a key's rolling limit reads "per 24 hours"; "Make primary"'s accessible name contains its visible text; the keys
 * table has no empty header cell.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  BASE_URL,
  captureFailures,
  finish,
  launch,
  openSession,
  screenshot,
  signedInSession,
  uniqueEmail,
  viewportOf,
  WIDTHS,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const owner = new ApiClient();
const ownerEmail = uniqueEmail('minor-controls');
let wallet: { id: string; address: string };

beforeAll(async () => {
  browser = await launch();
  await owner.signUp(ownerEmail, 'Cora Controls');
  wallet = await owner.fundedWallet('30', '20', 'Main');
  await owner.call('POST', '/wallets', { type: 'CUSTODIAL', label: 'Second' });
  await owner.call('POST', '/keys', { name: 'Limited', spendLimit: { amount: '10', period: '24h' } });
}, 180_000);
afterAll(async () => {
  await browser?.close();
});

describe('minor controls (issue 36 item 13)', () => {
  it('Escape closes the mail and the void confirmations, focus back on the button that opened them', async () => {
    for (const width of WIDTHS) {
      const name = `Esa Escape ${width}`;
      await owner.call('POST', '/transfer/letter', {
        walletId: wallet.id,
        amount: '1',
        recipient: {
          name,
          address: { line1: '5 Elm Street', city: 'Austin', region: 'TX', postal: '73301', country: 'US' },
        },
        claimOrigin: 'https://pay.example.com',
      });
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/letters');
      const card = page.getByRole('article', { name: `To ${name}` });
      const steps = [
        ['Mail it', `Confirm mailing the letter for ${name}`],
        ['Void', 'Confirm void'],
      ] as const;
      for (const [button, form] of steps) {
        const start = card.getByRole('button', { name: new RegExp(`^${button}`) });
        await start.click();
        await card.getByRole('form', { name: form }).waitFor();
        await screenshot(page, `confirm-${button.split(' ')[0]?.toLowerCase()}-open-${width}`);
        await page.keyboard.press('Escape');
        await card.getByRole('form', { name: form }).waitFor({ state: 'detached' });
        expect(await start.evaluate((e) => e === document.activeElement)).toBe(true);
      }
      await finish(session, `confirm-escape-closed-${width}`);
    }
  });

  it('the mailbox’s reset link is a link', async () => {
    await fetch(`${BASE_URL}/api/v1/auth/password/forgot`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ownerEmail }),
    });
    for (const width of WIDTHS) {
      const session = await openSession(browser, viewportOf(width));
      const { page } = session;
      await page.goto('/#/mailbox');
      await page.getByRole('heading', { name: 'Local mailbox', level: 1 }).waitFor();
      const message = page
        .getByRole('article')
        .filter({ hasText: ownerEmail })
        .filter({ hasText: 'Reset your sealpay password' });
      for (let i = 0; i < 40 && (await message.count()) === 0; i++) {
        await page.waitForTimeout(500);
        await page.getByRole('button', { name: 'Refresh' }).click();
      }
      const link = message.first().getByRole('link', { name: /#\/reset-password\?token=/ });
      expect(await link.count()).toBe(1);
      expect(await link.getAttribute('href')).toMatch(/^https?:\/\/\S+#\/reset-password\?token=\S+$/);
      await finish(session, `mailbox-reset-link-${width}`);
    }
  });

  it('Settings: a key’s limit reads “per 24 hours”, and every header of the keys table has a name', async () => {
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/settings');
      const table = page.locator('table.keys');
      await table.waitFor();
      const text = (await table.textContent()) ?? '';
      expect(text).toContain('10.00 per 24 hours, 0.00 used');
      expect(text).not.toContain('a day');
      const headers = await table.locator('th').allTextContents();
      for (const header of headers) expect(header.trim(), JSON.stringify(headers)).not.toBe('');
      await table.scrollIntoViewIfNeeded();
      await finish(session, `keys-table-words-${width}`);
    }
  });

  it('“Make primary”’s accessible name contains its visible text (axe label-content-name-mismatch)', async () => {
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/wallets');
      const button = page
        .getByRole('article', { name: /^Second/ })
        .getByRole('button', { name: /Make primary/ });
      await button.waitFor();
      const results = await new AxeBuilder({ page }).withRules(['label-content-name-mismatch']).analyze();
      expect(results.violations.map((v) => v.nodes.map((n) => n.target.join(' ')))).toEqual([]);
      await finish(session, `make-primary-name-${width}`);
    }
  });
});
