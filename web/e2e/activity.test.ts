/**
 * Activity that a person can read (issue 16 item 5): plain words for every transaction type, the right direction
 * for money in and out, columns that do not collide at 375 px, and a details view per transaction (status
 * history, hashes with copy buttons, explorer link where the network has one, receipt).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  BASE_URL,
  captureFailures,
  createLetter,
  finish,
  launch,
  type Session,
  screenshot,
  signedInSession,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();

/** The account the page shows: a wallet with every kind of row (in and out), another wallet receiving. */
const owner = new ApiClient();
let receivedTransferId = '';

beforeAll(async () => {
  browser = await launch();
  await owner.signUp(uniqueEmail('activity'), 'Ann Activity');
  // Fund and mint (out / between balances), then a transfer to a second wallet of the same account (out and in).
  const main = await owner.fundedWallet('80', '30');
  const { wallet: savings } = await owner.call<{ wallet: { id: string; address: string } }>(
    'POST',
    '/wallets',
    {
      type: 'CUSTODIAL',
      label: 'Savings',
    },
  );
  const { transaction: sent } = await owner.call<{ transaction: { id: string } }>('POST', '/transfer', {
    walletId: main.id,
    to: savings.address,
    amount: '7.5',
  });
  await owner.waitForTransaction(sent.id);
  // A letter from someone else, claimed into Savings (LETTER_CLAIM, money in).
  const sender = new ApiClient();
  await sender.signUp(uniqueEmail('activity-sender'), 'Sid Sender');
  const senderWallet = await sender.fundedWallet('20', '10');
  const letter = await createLetter(sender, senderWallet.id, '2.25', 'Ann Activity');
  await owner.call('POST', '/transfer/letter/claim', { claimCode: letter.claimCode, walletId: savings.id });
  // The incoming transfer is recorded by the chain follower shortly after the block.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const page = await owner.call<{
      items: { id: string; type: string; direction: string; status: string }[];
    }>('GET', '/transactions?pageSize=50');
    const received = page.items.find(
      (t) => t.type === 'TRANSFER' && t.direction === 'in' && t.status === 'CONFIRMED',
    );
    if (received) {
      receivedTransferId = received.id;
      break;
    }
    if (Date.now() > deadline) throw new Error('the incoming transfer was never recorded');
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/** A browser session signed in as `owner`. */
function ownerSession(viewport?: { width: number; height: number }): Promise<Session> {
  return signedInSession(browser, owner, viewport);
}

async function activityRows(page: Page) {
  await page.goto('/#/wallets');
  await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
  const rows = page.locator('table.activity-table tbody tr');
  await expect.poll(() => rows.count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(5);
  return rows;
}

describe('activity', () => {
  it('names every type in plain words, with the right direction and sign, and no raw type names', async () => {
    const session = await ownerSession();
    const { page } = session;
    const rows = await activityRows(page);
    const table = (await page.locator('table.activity-table').textContent()) ?? '';
    for (const raw of ['LETTER_CLAIM', 'LETTER_ESCROW', 'TRANSFER', 'FUND', 'MINT', '_']) {
      expect(table).not.toContain(raw);
    }
    const row = (type: string, direction: string) =>
      page.locator(`tr[data-type="${type}"][data-direction="${direction}"]`).first();
    const expectations: [string, string, string, string, string][] = [
      // type, direction, words, arrow, amount
      ['FUND', 'out', 'Test money added', '↓', '+80.00 STABLE'],
      ['MINT', 'out', 'Made private', '⇄', '30.00'],
      ['TRANSFER', 'out', 'Sent', '↑', '−7.50 cSTABLE'],
      ['TRANSFER', 'in', 'Received', '↓', '+7.50 cSTABLE'],
      ['LETTER_CLAIM', 'in', 'Letter claimed', '↓', '+2.25 cSTABLE'],
    ];
    for (const [type, direction, words, arrow, amount] of expectations) {
      const r = row(type, direction);
      await r.waitFor();
      expect(await r.locator('.tx-words').textContent()).toBe(words);
      expect(await r.locator('.flow').textContent()).toBe(arrow);
      expect(await r.locator('.amount').textContent()).toContain(amount);
    }
    // Screen readers hear the direction in words.
    expect(await row('TRANSFER', 'in').locator('.visually-hidden').textContent()).toBe('Money in: ');
    expect(await row('TRANSFER', 'out').locator('.visually-hidden').textContent()).toBe('Money out: ');
    expect(await row('LETTER_CLAIM', 'in').textContent()).toContain('from letter escrow');
    expect(await rows.count()).toBeGreaterThanOrEqual(5);
    await finish(session, 'activity-1280');
  });

  it('keeps each row readable at 375 px: no word broken, no columns on top of each other, no sideways scroll', async () => {
    const session = await ownerSession({ width: 375, height: 812 });
    const { page } = session;
    const rows = await activityRows(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const layout = await rows.evaluateAll((trs) =>
      trs.map((tr) => {
        const edges = (r: DOMRect) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
        const box = (selector: string) => {
          const r = tr.querySelector(selector)?.getBoundingClientRect();
          return r ? edges(r) : null;
        };
        const words = tr.querySelector('.tx-words') as HTMLElement;
        const party = tr.querySelector('.party');
        const lineHeight = Number.parseFloat(getComputedStyle(words).lineHeight);
        return {
          row: edges(tr.getBoundingClientRect()),
          cells: ['.what', '.amount', '.when', '.tx-state', '.more'].map(box),
          // A type's words on one line: never broken inside a word.
          wordsLines: Math.round(words.getBoundingClientRect().height / lineHeight),
          partyLines: party ? Math.round(party.getBoundingClientRect().height / lineHeight) : 1,
          words: words.textContent,
        };
      }),
    );
    type Box = { left: number; right: number; top: number; bottom: number };
    const overlap = (a: Box, b: Box) =>
      a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
    for (const { row, cells, wordsLines, partyLines, words } of layout) {
      // What happened, and the other side (an address shortened), each whole on one line.
      expect(wordsLines, `${words} wraps`).toBe(1);
      expect(partyLines, `the other side of ${words} wraps`).toBe(1);
      const present = cells.filter((c): c is Box => c !== null);
      expect(present).toHaveLength(5);
      for (const cell of present) {
        expect(cell.left).toBeGreaterThanOrEqual((row as Box).left - 1);
        expect(cell.right).toBeLessThanOrEqual((row as Box).right + 1);
      }
      for (let i = 0; i < present.length; i += 1) {
        for (let j = i + 1; j < present.length; j += 1) {
          expect(overlap(present[i] as Box, present[j] as Box), `cells ${i} and ${j} collide`).toBe(false);
        }
      }
    }
    await finish(session, 'activity-375');
  });

  it('opens a transaction: status history, hashes with copy buttons, explorer link where there is one, receipt', async () => {
    const session = await ownerSession();
    const { page, context } = session;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE_URL });
    const rows = await activityRows(page);
    expect(await rows.count()).toBeGreaterThanOrEqual(5);
    await page
      .locator('tr[data-type="TRANSFER"][data-direction="in"]')
      .first()
      .getByRole('link', { name: /^Details of received/ })
      .click();
    await page.getByRole('heading', { name: 'Received +7.50 cSTABLE', level: 1 }).waitFor();
    expect(page.url()).toContain(`#/transaction/${receivedTransferId}`);
    const { transaction } = await owner.call<{
      transaction: { txHash: string; createdAt: string; status: string };
    }>('GET', `/transactions/${receivedTransferId}`);

    const history = page.getByRole('region', { name: 'Status history' });
    expect(await history.locator('ol.history li').count()).toBeGreaterThanOrEqual(2);
    const historyText = (await history.textContent()) ?? '';
    expect(historyText).toContain('Submitted');
    expect(historyText).toMatch(/Recorded on the chain in block \d+/);
    expect(historyText).toContain('Now CONFIRMED');
    expect(historyText).toContain('keeps no log of each step');
    expect(await page.getByRole('region', { name: 'What happened' }).textContent()).toContain('Money in');

    // The hash whole, copied by its button; the local chain has no explorer, and the page says so.
    const chain = page.getByRole('region', { name: 'On the chain' });
    expect(await chain.locator('code.hash').first().textContent()).toBe(transaction.txHash);
    await chain.getByRole('button', { name: 'Copy transaction hash' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(transaction.txHash);
    expect(await chain.getByRole('link', { name: 'View in explorer' }).count()).toBe(0);
    expect(await chain.textContent()).toContain('no public explorer');

    // The receipt, from the details.
    await page.getByRole('link', { name: 'View receipt' }).click();
    await page.getByRole('heading', { name: 'Receipt', level: 1 }).waitFor();
    await page.locator('.verdict').waitFor();
    expect(await page.locator('.verdict-head').textContent()).toContain('Verified');
    await screenshot(page, 'transaction-receipt-1280');

    // Where the network has an explorer, each hash links to it.
    await page.route('**/api/v1/network', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { data: Record<string, unknown> };
      body.data.explorerBaseUrl = 'https://explorer.example';
      await route.fulfill({ response, json: body });
    });
    await page.goto(`/#/transaction/${receivedTransferId}`);
    await page.reload();
    const link = page
      .getByRole('region', { name: 'On the chain' })
      .getByRole('link', { name: 'View in explorer' });
    await link.first().waitFor();
    expect(await link.first().getAttribute('href')).toBe(`https://explorer.example/tx/${transaction.txHash}`);
    await finish(session, 'transaction-details-1280');
  });

  it('shows the details view within 375 px', async () => {
    const session = await ownerSession({ width: 375, height: 812 });
    const { page } = session;
    await page.goto(`/#/transaction/${receivedTransferId}`);
    await page.getByRole('heading', { name: 'Received +7.50 cSTABLE', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Copy transaction hash' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await finish(session, 'transaction-details-375');
  });
});
