/**
 * Issue 36, item 11: a claim answered `502 claim_unsettled` (the sandbox's `…504` amounts: the release is mined, the
 * letter's bookkeeping waits for the reconciliation) is the person's claim in progress: the page shows it as theirs
 * (into the wallet the money went to, the preview "Being claimed right now"), never "claimed by someone else",
 * offers no second Claim, and makes no wallet for a claim that cannot happen.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  allowProblems,
  captureFailures,
  createLetter,
  finish,
  launch,
  PASSWORD,
  screenshot,
  signedInSession,
  uniqueEmail,
  viewportOf,
  WIDTHS,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const sender = new ApiClient();
let senderWalletId = '';
beforeAll(async () => {
  browser = await launch();
  await sender.signUp(uniqueEmail('unsettled-sender'));
  senderWalletId = (await sender.fundedWallet('40', '30')).id;
});
afterAll(async () => {
  await browser?.close();
});

interface Wallet {
  id: string;
  label: string;
}

/** A claimer with one wallet, "Main". */
async function claimer(tag: string): Promise<{ client: ApiClient; email: string; main: Wallet }> {
  const client = new ApiClient();
  const email = uniqueEmail(tag);
  await client.signUp(email);
  const { wallet } = await client.call<{ wallet: Wallet }>('POST', '/wallets', {
    type: 'CUSTODIAL',
    label: 'Main',
  });
  return { client, email, main: wallet };
}

async function walletsOf(client: ApiClient): Promise<Wallet[]> {
  return (await client.call<{ wallets: Wallet[] }>('GET', '/wallets')).wallets;
}

async function chooseNewWallet(page: Page): Promise<void> {
  await page.getByRole('heading', { name: 'Where should the money go?' }).waitFor();
  await page.getByRole('radio', { name: /^A new wallet/ }).check();
}

/**
 * The page the claim ends on: the person's own claim, into `into`, and nothing to press again. It is in progress
 * (the preview "Being claimed right now") until the worker's reconciliation, every minute, lands it; from then on it
 * reads claimed (the preview "Claimed"). Both are read at once, so that the page is judged in one state.
 */
async function expectOwnClaim(page: Page, into: string): Promise<void> {
  await page.locator('section.result').waitFor({ timeout: 60_000 });
  const shown = await page.evaluate(() => ({
    heading: document.querySelector('section.result h2')?.textContent,
    into: document.querySelector('section.result .claimed-into')?.textContent,
    preview: document.querySelector('.letter-preview [data-status]')?.getAttribute('data-status'),
    previewWords: document.querySelector('.letter-preview [data-status]')?.textContent,
  }));
  expect(shown.into).toMatch(
    new RegExp(`^You claimed this on .+ into ${into} \\(0x[0-9a-f]+…[0-9a-f]+\\)\\.$`, 'i'),
  );
  if (shown.heading === 'Claim in progress') {
    expect([shown.preview, shown.previewWords]).toEqual(['CLAIMING', 'Being claimed right now']);
  } else {
    expect(shown.heading).toMatch(/^(You claimed this letter|Claimed!)$/);
    expect([shown.preview, shown.previewWords]).toEqual(['CLAIMED', 'Claimed']);
  }
  expect(await page.getByText(/someone else/i).count()).toBe(0);
  expect(await page.getByRole('button', { name: 'Claim', exact: true }).count()).toBe(0);
}

describe('a claim answered claim_unsettled', () => {
  it('shows the claim in progress as the claimant’s, into the new wallet it made, with no second Claim', async () => {
    for (const width of WIDTHS) {
      const letter = await createLetter(sender, senderWalletId, '1.000504', `Nia Unsettled ${width}`);
      const { client, main } = await claimer(`unsettled-${width}`);
      const session = await signedInSession(browser, client, viewportOf(width));
      const { page } = session;
      await page.goto(letter.claimUrl);
      await chooseNewWallet(page);
      const [answer] = await Promise.all([
        page.waitForResponse(
          (r) => r.request().method() === 'POST' && r.url().endsWith('/api/v1/transfer/letter/claim'),
          { timeout: 60_000 },
        ),
        page.getByRole('button', { name: 'Claim', exact: true }).click(),
      ]);
      expect(answer.status()).toBe(502);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('claim_unsettled');
      await expectOwnClaim(page, 'Wallet 2');
      // One wallet was made, for the claim the money went to; Main is untouched.
      const wallets = await walletsOf(client);
      expect(wallets.map((w) => w.label).sort()).toEqual(['Main', 'Wallet 2']);
      expect(wallets.some((w) => w.id === main.id)).toBe(true);
      allowProblems(session, /status of 502/);
      await finish(session, `claim-unsettled-new-wallet-${width}`);
    }
  });

  it('shows a claim made meanwhile from another session of the account as theirs, and makes no wallet for it', async () => {
    for (const width of WIDTHS) {
      const letter = await createLetter(sender, senderWalletId, '1.000504', `Oz Elsewhere ${width}`);
      const { client, email, main } = await claimer(`elsewhere-${width}`);
      const session = await signedInSession(browser, client, viewportOf(width));
      const { page } = session;
      await page.goto(letter.claimUrl);
      await chooseNewWallet(page);
      expect(await page.locator('.letter-preview [data-status]').textContent()).toBe('Ready to claim');
      await screenshot(page, `claim-elsewhere-before-${width}`);

      // The same person claims from another session (a phone, an API script) into Main: unsettled.
      const other = new ApiClient();
      await other.call('POST', '/auth/login', { email, password: PASSWORD });
      const elsewhere = await other.raw('POST', '/transfer/letter/claim', {
        claimCode: letter.claimCode,
        walletId: main.id,
      });
      expect(elsewhere.status).toBe(502);
      expect(elsewhere.body.error?.code).toBe('claim_unsettled');

      // This page still offers the choice it showed; pressing Claim finds the claim already made, theirs.
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await expectOwnClaim(page, 'Main');
      expect((await walletsOf(client)).map((w) => w.label)).toEqual(['Main']);
      await finish(session, `claim-elsewhere-theirs-${width}`);
    }
  });
});
