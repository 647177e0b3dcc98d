/**
 * The receipt page (issue 16 item 6): a transaction's `.nota` receipt in readable form, its signature checked in the
 * browser against the published key (the service is not asked), "Verified" said plainly; a tampered receipt
 * "Not verified"; printable (print stylesheet, PDF); the `.nota` file still downloadable.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  finish,
  launch,
  RESULTS_DIR,
  type Session,
  screenshot,
  signedInSession,
  uniqueEmail,
} from './helpers.ts';

let browser: Browser;
captureFailures();
const owner = new ApiClient();
let fundId = '';

beforeAll(async () => {
  browser = await launch();
  await owner.signUp(uniqueEmail('receipts'), 'Rae Receipt');
  const { wallet } = await owner.call<{ wallet: { id: string } }>('POST', '/wallets', { type: 'CUSTODIAL' });
  const { transaction } = await owner.call<{ transaction: { id: string } }>('POST', '/fund', {
    walletId: wallet.id,
    amount: '12.5',
  });
  fundId = transaction.id;
  await owner.waitForTransaction(fundId);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

/** A browser session signed in as `owner`. */
function ownerSession(viewport?: { width: number; height: number }): Promise<Session> {
  return signedInSession(browser, owner, viewport);
}

describe('receipt page', () => {
  it('renders the receipt, verified in the browser against the published key, printable, with the .nota file kept', async () => {
    const session = await ownerSession();
    const { page } = session;
    // Which calls the page makes: the check must not be delegated to the service's own verify route.
    const calls: string[] = [];
    page.on('request', (request) => calls.push(`${request.method()} ${new URL(request.url()).pathname}`));
    await page.goto(`/#/receipt/${fundId}`);
    await page.getByRole('heading', { name: 'Receipt', level: 1 }).waitFor();
    const receipt = page.getByRole('article', { name: 'sealpay receipt' });
    await receipt.locator('.verdict').waitFor();
    expect(await receipt.locator('.verdict').getAttribute('data-verified')).toBe('true');
    expect(await receipt.locator('.verdict-head').textContent()).toBe('✓ Verified');
    const { keys } = await owner.call<{ keys: { keyId: string }[] }>('GET', '/notas/keys');
    expect(await receipt.locator('.verdict').textContent()).toContain(keys[0]?.keyId ?? 'no key');
    expect(calls).toContain('GET /api/v1/notas/keys');
    expect(calls).not.toContain('POST /api/v1/notas/verify');

    // Readable: what, amount, status, block, hash.
    const text = (await receipt.textContent()) ?? '';
    expect(text).toContain('Test money added');
    expect(await receipt.locator('.receipt-amount').textContent()).toBe('+12.50 STABLE');
    expect(text).toContain('CONFIRMED');
    expect(text).toMatch(/Block\d+/);
    const { transaction } = await owner.call<{ transaction: { txHash: string } }>(
      'GET',
      `/transactions/${fundId}`,
    );
    expect(text).toContain(transaction.txHash);
    await screenshot(page, 'receipt-1280');

    // The .nota file for machines.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download .nota file' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`sealpay-receipt-${fundId}.nota`);
    const nota = readFileSync(await download.path(), 'utf8');
    expect(JSON.parse(Buffer.from(nota, 'base64url').toString('utf8'))).toMatchObject({
      nota: 1,
      kind: 'receipt',
      payload: { id: fundId },
    });

    // Printing keeps the receipt alone: no header, buttons or file checker; and it saves as a PDF.
    expect(await page.getByRole('button', { name: 'Print or save as PDF' }).isVisible()).toBe(true);
    await page.emulateMedia({ media: 'print' });
    expect(await receipt.isVisible()).toBe(true);
    expect(await page.locator('header.top').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Print or save as PDF' }).isVisible()).toBe(false);
    expect(await page.getByRole('region', { name: 'Check a receipt file' }).isVisible()).toBe(false);
    const pdf = await page.pdf({ path: `${RESULTS_DIR}/receipt.pdf`, format: 'A4' });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    await page.emulateMedia({ media: 'screen' });
    await finish(session, 'receipt-page');
  });

  it('shows a tampered receipt file as not verified, and the genuine file as verified', async () => {
    const { nota } = await owner.call<{ nota: string }>('GET', `/transactions/${fundId}/nota`);
    const decoded = JSON.parse(Buffer.from(nota, 'base64url').toString('utf8')) as {
      payload: Record<string, unknown>;
    };
    const forged = { ...decoded, payload: { ...decoded.payload, amount: '5000.00' } };
    const tampered = Buffer.from(JSON.stringify(forged)).toString('base64url');

    const session = await ownerSession({ width: 375, height: 812 });
    const { page } = session;
    await page.goto('/#/receipt');
    await page.getByRole('heading', { name: 'Receipt', level: 1 }).waitFor();
    const file = page.getByLabel('Receipt file (.nota)');
    await file.setInputFiles({ name: 'forged.nota', mimeType: 'text/plain', buffer: Buffer.from(tampered) });
    const receipt = page.getByRole('article', { name: 'sealpay receipt' });
    await receipt.locator('.verdict').waitFor();
    expect(await receipt.locator('.verdict').getAttribute('data-verified')).toBe('false');
    expect(await receipt.locator('.verdict-head').textContent()).toBe('✗ Not verified');
    expect(await receipt.locator('.verdict').textContent()).toContain('changed after the service signed it');
    expect(await receipt.locator('.receipt-amount').textContent()).toBe('+5,000.00 STABLE');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await screenshot(page, 'receipt-tampered-375');

    await file.setInputFiles({ name: 'genuine.nota', mimeType: 'text/plain', buffer: Buffer.from(nota) });
    await expect.poll(() => receipt.locator('.verdict').getAttribute('data-verified')).toBe('true');
    await screenshot(page, 'receipt-375');

    // Something that is not a receipt is said so.
    await file.setInputFiles({
      name: 'junk.nota',
      mimeType: 'text/plain',
      buffer: Buffer.from('hello world'),
    });
    await page.getByRole('alert').filter({ hasText: 'not a .nota receipt file' }).waitFor();
    await finish(session, 'receipt-file-check');
  });
});
