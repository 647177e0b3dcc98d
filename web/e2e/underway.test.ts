/**
 * Issue 36, items 8 and 9: money is never shown as moving before it moves. A QUEUED transfer or fund reads as on
 * its way ("Sending…", "Adding test money…"), unsigned and not coloured as money in or out, in Activity and in its
 * details, also after a reload; only CONFIRMED reads as done. What is on its way out of a wallet is not offered as
 * available to spend again, and the form says so.
 *
 * The sandbox's `…429` amounts keep a row QUEUED for 30 s (README, "magic amounts"): long enough to look at it.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  alert,
  captureFailures,
  finish,
  launch,
  move,
  screenshot,
  signedInSession,
  uniqueEmail,
  viewportOf,
  WIDTHS,
} from './helpers.ts';

let browser: Browser;
captureFailures();
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const ELSEWHERE = `0x${'5'.repeat(40)}`;

interface Tx {
  id: string;
  type: string;
  status: string;
}

async function openWallets(page: Page): Promise<void> {
  await page.goto('/#/wallets');
  await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
}

/** The Activity row of `id`, read at once: its status, words, amount and the amount's class. */
async function rowOf(page: Page, id: string) {
  const row = page.locator(`tr[data-tx-id="${id}"]`);
  await row.waitFor();
  return await row.evaluate((element) => ({
    status: element.getAttribute('data-status'),
    words: element.querySelector('.tx-words')?.textContent,
    amount: element.querySelector('td.amount')?.textContent,
    amountClass: element.querySelector('td.amount')?.className,
    colour: getComputedStyle(element.querySelector('td.amount') as Element).color,
  }));
}

describe('money on its way', () => {
  it('says a queued transfer and a queued fund as on their way, in Activity and in the details, until confirmed', async () => {
    const client = new ApiClient();
    await client.signUp(uniqueEmail('underway'));
    const wallet = await client.fundedWallet('100', '50', 'Main');
    const green = 'rgb(30, 107, 58)';
    let lastTransfer = '';
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, client, viewportOf(width));
      const { page } = session;
      await openWallets(page);
      // Queued now (held QUEUED for 30 s by the sandbox), then read by the list at once.
      const transfer = await client.call<{ transaction: Tx }>('POST', '/transfer', {
        walletId: wallet.id,
        amount: '4.000429',
        to: ELSEWHERE,
      });
      const fund = await client.call<{ transaction: Tx }>('POST', '/fund', {
        walletId: wallet.id,
        amount: '20.000429',
      });
      lastTransfer = transfer.transaction.id;
      await page.getByRole('button', { name: 'Refresh' }).click();

      const sent = await rowOf(page, transfer.transaction.id);
      expect(sent.status).toBe('QUEUED');
      expect(sent.words).toBe('Sending…');
      expect(sent.amount).toBe('4.000429 cSTABLE');
      expect(sent.amountClass).toContain('flow-waiting');
      const added = await rowOf(page, fund.transaction.id);
      expect(added.status).toBe('QUEUED');
      expect(added.words).toBe('Adding test money…');
      expect(added.amount).toBe('20.000429 STABLE');
      expect(added.colour).not.toBe(green);
      await page.locator('.activity').scrollIntoViewIfNeeded();
      await screenshot(page, `underway-activity-${width}`);

      // Its details, and the same after a reload (all a person sees then).
      await page.goto(`/#/transaction/${transfer.transaction.id}`);
      for (const reloaded of [false, true]) {
        if (reloaded) await page.reload();
        const heading = page.getByRole('heading', { level: 1 });
        await expect.poll(() => heading.textContent(), { timeout: 15_000 }).toBe('Sending… 4.000429 cSTABLE');
        const details = page.locator('.tx-details');
        expect(await details.getAttribute('data-status')).toBe('QUEUED');
        expect(await details.locator('.underway-note').textContent()).toBe(
          'Not done yet: it is queued for the network, and nothing has moved.',
        );
        expect(await details.locator('.tx-direction').textContent()).toBe('Not moved yet');
        expect(await details.getByText('−4.000429').count()).toBe(0);
      }
      await screenshot(page, `underway-details-${width}`);
      await page.goto(`/#/transaction/${fund.transaction.id}`);
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
        .toBe('Adding test money… 20.000429 STABLE');
      expect(await page.locator('.tx-amount').evaluate((e) => getComputedStyle(e).color)).not.toBe(green);
      await finish(session, `underway-fund-details-${width}`);
    }

    // Once confirmed, and only then, it reads as done: signed, in its own words.
    await client.waitForTransaction(lastTransfer);
    const session = await signedInSession(browser, client, viewportOf(375));
    await session.page.goto(`/#/transaction/${lastTransfer}`);
    await expect
      .poll(() => session.page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 })
      .toBe('Sent −4.000429 cSTABLE');
    expect(await session.page.locator('.underway-note').count()).toBe(0);
    await finish(session, 'underway-done-375');
  });

  it('does not offer what is already on its way: available is the balance less it, said so, and checked', async () => {
    for (const width of WIDTHS) {
      const client = new ApiClient();
      await client.signUp(uniqueEmail('on-its-way'));
      await client.fundedWallet('100', '45', 'Main');
      const session = await signedInSession(browser, client, viewportOf(width));
      const { page } = session;
      await openWallets(page);
      const form = page.getByRole('form', { name: 'Move money' });
      const available = form.locator('.available');
      await form.getByRole('radio', { name: 'Transfer' }).check();
      await expect.poll(() => available.textContent(), { timeout: 20_000 }).toBe('Available: 45.00 cSTABLE');

      // 10.000429 is queued (held QUEUED for 30 s): it has not left the balance read from the chain yet.
      await move(page, 'Transfer', 'Main', '10.000429', ELSEWHERE);
      await expect
        .poll(() => available.textContent(), { timeout: 15_000 })
        .toBe(
          'Available: 34.999571 cSTABLE (the wallet holds 45.00, of which 10.000429 is already on its way)',
        );
      const newest = form.locator('.op-line').first();
      expect(await newest.getAttribute('data-status')).toBe('QUEUED');

      // A second transfer of more than what is left is refused here, before anything is sent.
      const sent: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && request.url().endsWith('/api/v1/transfer'))
          sent.push(request.url());
      });
      await form.getByLabel('Amount').fill('40');
      await form.getByRole('button', { name: 'Transfer' }).click();
      await alert(
        page,
        'The wallet holds 45.00 cSTABLE, of which 10.000429 is already on its way: 34.999571 is available, too little to transfer 40.',
      );
      expect(sent).toEqual([]);
      const { items } = await client.call<{ items: Tx[] }>('GET', '/transactions?type=TRANSFER');
      expect(items).toHaveLength(1);
      await form.scrollIntoViewIfNeeded();
      await finish(session, `on-its-way-${width}`);
    }
  });
});
