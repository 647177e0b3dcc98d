/**
 * Issue 25 items 11 and 14: a FAILED transfer never reads as sent. Its activity row, details page and printable
 * receipt say it was not sent and that nothing moved, with the reason in words; no signed (debited) amount, no
 * "✓ Verified" (only a confirmed transaction's receipt verifies). At 375 px its activity row keeps its shape.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  finish,
  launch,
  type Session,
  screenshot,
  signedInSession,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const owner = new ApiClient();
let failedId = '';
let failedError = '';
const LABEL = 'Everyday spending';

beforeAll(async () => {
  browser = await launch();
  await owner.signUp(uniqueEmail('failed'), 'Fay Failed');
  const wallet = await owner.fundedWallet('100', '60', LABEL);
  const { transaction } = await owner.call<{ transaction: { id: string } }>('POST', '/transfer', {
    walletId: wallet.id,
    amount: '1000',
    to: `0x${'5'.repeat(40)}`,
  });
  failedId = transaction.id;
  const done = await owner.waitForTransaction(failedId, ['FAILED'], 90_000).catch((error: Error) => error);
  const { transaction: row } = await owner.call<{ transaction: { status: string; error: string } }>(
    'GET',
    `/transactions/${failedId}`,
  );
  expect(row.status, String(done)).toBe('FAILED');
  failedError = row.error;
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/** A browser session signed in as `owner`. */
function ownerSession(viewport?: { width: number; height: number }): Promise<Session> {
  return signedInSession(browser, owner, viewport);
}

function failedRow(page: Page) {
  return page.locator(`tr[data-tx-id="${failedId}"]`);
}

/**
 * What every view of the failed transfer must and must not say. It reached the chain and failed there, so it reads
 * as failed on the chain, not as "not sent" (issue 36 item 13).
 */
function expectNotSent(text: string): void {
  expect(text).toContain('failed on the chain');
  expect(text).not.toMatch(/not sent/i);
  expect(text).toMatch(/nothing moved|moved nothing/);
  expect(text).toContain(failedError);
  expect(text).not.toContain('−1,000.00');
  expect(text).not.toMatch(/\bSent\b/);
  expect(text).not.toContain('✓ Verified');
}

describe('a FAILED transfer', () => {
  it('reads as not sent, nothing moved, with its reason, in the activity row, the details and the receipt (item 11)', async () => {
    const session = await ownerSession();
    const { page } = session;
    await page.goto('/#/wallets');
    await failedRow(page).waitFor();
    const row = failedRow(page);
    expectNotSent((await row.textContent()) ?? '');
    expect(await row.locator('.amount').textContent()).toBe('1,000.00 cSTABLE');
    expect(await row.locator('.tx-reason').textContent()).toContain('This transfer failed on the chain.');
    await row.scrollIntoViewIfNeeded();
    await screenshot(page, 'failed-activity-1280');

    await row.getByRole('link', { name: /^Details/ }).click();
    const heading = page.getByRole('heading', { level: 1 });
    await expect.poll(() => heading.textContent()).toBe('Transfer failed: 1,000.00 cSTABLE');
    const details = page.locator('.tx-details');
    const detailsText = (await details.textContent()) ?? '';
    expectNotSent(detailsText);
    expect(await details.locator('.tx-amount').textContent()).toBe('1,000.00 cSTABLE');
    expect(await details.locator('.tx-direction').textContent()).toBe('Nothing moved');
    expect(detailsText).toContain('not proof of a payment');
    expect(await page.title()).toBe('Transfer failed · sealpay');
    await screenshot(page, 'failed-details-1280');

    await page.getByRole('link', { name: 'View receipt' }).click();
    const receipt = page.getByRole('article', { name: 'sealpay receipt' });
    await receipt.locator('.verdict').waitFor();
    expect(await receipt.locator('.verdict').getAttribute('data-verified')).toBe('false');
    expect(await receipt.locator('.verdict').getAttribute('data-signature')).toBe('genuine');
    expect(await receipt.locator('.verdict-head').textContent()).toBe('✗ Not verified');
    const receiptText = (await receipt.textContent()) ?? '';
    expectNotSent(receiptText);
    expect(receiptText).toContain('only a confirmed transaction’s receipt can be verified');
    expect(await receipt.locator('.receipt-amount').textContent()).toBe('1,000.00 cSTABLE');
    await screenshot(page, 'failed-receipt-1280');
    await page.emulateMedia({ media: 'print' });
    expect(await receipt.locator('.not-sent').isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });

    // The same views on a phone.
    await page.setViewportSize({ width: 375, height: 812 });
    await screenshot(page, 'failed-receipt-375');
    await page.goBack();
    await page.locator('.tx-details').waitFor();
    await screenshot(page, 'failed-details-375');
    await finish(session, 'failed-transaction-views');
  });

  it('keeps its activity row whole at 375 px: the wallet name in words, the badge clear of the date (item 14)', async () => {
    const session = await ownerSession({ width: 375, height: 812 });
    const { page } = session;
    await page.goto('/#/wallets');
    const row = failedRow(page);
    await row.waitFor();
    await row.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    // The wallet name is on one or two lines, not one letter per line.
    const name = row.locator('.wallet-name');
    const nameBox = await name.boundingBox();
    const lineHeight = await name.evaluate((e) => Number.parseFloat(getComputedStyle(e).lineHeight) || 20);
    expect(nameBox?.height ?? 0).toBeLessThan(lineHeight * 2.5);
    // The badge does not overlap the date, nor the reason either of them.
    const boxes = await Promise.all(
      ['.when', '.tx-state .badge', '.tx-reason', '.amount'].map((s) => row.locator(s).boundingBox()),
    );
    const [when, badge, reason, amount] = boxes;
    const overlap = (
      a: { x: number; y: number; width: number; height: number } | null | undefined,
      b: typeof a,
    ) =>
      !!a &&
      !!b &&
      a.x < b.x + b.width &&
      b.x < a.x + a.width &&
      a.y < b.y + b.height &&
      b.y < a.y + a.height;
    expect(overlap(when, badge)).toBe(false);
    expect(overlap(reason, badge)).toBe(false);
    expect(overlap(reason, when)).toBe(false);
    expect(overlap(reason, amount)).toBe(false);
    // Everything in the row stays inside the screen.
    for (const box of boxes) expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(375);
    await screenshot(page, 'failed-activity-375');
    await finish(session, 'failed-activity-row-375');
  });
});
