/**
 * Issue 36 item 13, the words: a failed row says "nothing moved" once; a failure that reached the chain does not read
 * "not sent", and one that did not is not "No chain transaction yet"; a voided letter's claim page does not say
 * "until you claim it"; a mailed-then-voided letter reads cancelled, not "not yet posted"; amounts in one format
 * ("5.00", "5,000.00") everywhere; a transfer to one's own wallet names that wallet.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  captureFailures,
  createLetter,
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
let everyday: { id: string; address: string };
let savings: { id: string; address: string };
/** A transfer that reached the chain and moved nothing (more than the wallet holds). */
let onChainFailure = '';
/** A transfer refused before it reached the chain (the sandbox's …402 amount). */
let offChainFailure = '';
/** A transfer from Everyday to the account's own Savings wallet. */
let ownTransfer = '';

beforeAll(async () => {
  browser = await launch();
  await owner.signUp(uniqueEmail('minor-words'), 'Mina Words');
  everyday = await owner.fundedWallet('100', '60', 'Everyday');
  ({ wallet: savings } = await owner.call<{ wallet: { id: string; address: string } }>('POST', '/wallets', {
    type: 'CUSTODIAL',
    label: 'Savings',
  }));
  const transfer = async (amount: string, to: string) =>
    (
      await owner.call<{ transaction: { id: string } }>('POST', '/transfer', {
        walletId: everyday.id,
        amount,
        to,
      })
    ).transaction.id;
  onChainFailure = await transfer('1000', `0x${'5'.repeat(40)}`);
  offChainFailure = await transfer('1.000402', `0x${'6'.repeat(40)}`);
  ownTransfer = await transfer('2', savings.address);
  for (const id of [onChainFailure, offChainFailure]) {
    await owner.waitForTransaction(id, ['FAILED'], 90_000).catch(() => {});
  }
  await owner.waitForTransaction(ownTransfer, ['CONFIRMED', 'SETTLED'], 90_000);
  const read = async (id: string) =>
    (
      await owner.call<{ transaction: { status: string; txHash: string | null } }>(
        'GET',
        `/transactions/${id}`,
      )
    ).transaction;
  const [onChain, offChain] = [await read(onChainFailure), await read(offChainFailure)];
  expect(onChain).toMatchObject({ status: 'FAILED', txHash: expect.stringMatching(/^0x/) });
  expect(offChain).toMatchObject({ status: 'FAILED', txHash: null });
}, 240_000);
afterAll(async () => {
  await browser?.close();
});

function row(page: Page, id: string) {
  return page.locator(`tr[data-tx-id="${id}"]`);
}

/** How often the row says that nothing moved ("nothing moved", "moved nothing"), whatever the case. */
function nothingMoved(text: string): number {
  return text.match(/nothing moved|moved nothing/gi)?.length ?? 0;
}

describe('minor words (issue 36 item 13)', () => {
  it('a failed row says “nothing moved” once; a failure on the chain is not “not sent”; one before it has no “No chain transaction yet”', async () => {
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/wallets');
      await row(page, onChainFailure).waitFor();
      const onChainText = (await row(page, onChainFailure).textContent()) ?? '';
      const offChainText = (await row(page, offChainFailure).textContent()) ?? '';
      expect(nothingMoved(onChainText), onChainText).toBe(1);
      expect(nothingMoved(offChainText), offChainText).toBe(1);
      expect(onChainText).not.toMatch(/not sent/i);
      expect(onChainText).toContain('failed on the chain');
      expect(offChainText).toMatch(/not sent/i);
      await row(page, offChainFailure).scrollIntoViewIfNeeded();
      await screenshot(page, `failed-rows-words-${width}`);

      await page.goto(`/#/transaction/${onChainFailure}`);
      await page.locator(`.tx-details[data-tx-id="${onChainFailure}"]`).waitFor();
      const onChainDetails = (await page.locator('main').textContent()) ?? '';
      expect(onChainDetails).not.toMatch(/not sent/i);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
        'Transfer failed: 1,000.00 cSTABLE',
      );
      await screenshot(page, `failed-on-chain-details-${width}`);

      await page.goto(`/#/transaction/${offChainFailure}`);
      await page.locator(`.tx-details[data-tx-id="${offChainFailure}"]`).waitFor();
      const chain = page.getByRole('region', { name: 'On the chain' });
      const chainText = (await chain.textContent()) ?? '';
      expect(chainText).not.toContain('No chain transaction yet');
      expect(chainText).toContain('It failed before reaching the chain');
      await finish(session, `failed-off-chain-details-${width}`);
    }
  });

  it('a transfer to one’s own wallet names that wallet, in the activity and the details', async () => {
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/wallets');
      const sent = row(page, ownTransfer);
      await sent.waitFor();
      expect(await sent.locator('.party').textContent()).toBe(' to Savings');
      await sent.scrollIntoViewIfNeeded();
      await screenshot(page, `own-wallet-transfer-row-${width}`);
      await page.goto(`/#/transaction/${ownTransfer}`);
      await page.locator(`.tx-details[data-tx-id="${ownTransfer}"]`).waitFor();
      const facts = (await page.locator('.tx-details').textContent()) ?? '';
      expect(facts).toContain('To Savings');
      await finish(session, `own-wallet-transfer-details-${width}`);
    }
  });

  it('amounts read one way everywhere: “5.00” as typed “5”, “5,000.00” in the service’s refusal', async () => {
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/letters');
      const form = page.getByRole('form', { name: 'Create a letter of value' });
      await form.getByLabel('From wallet').selectOption(everyday.id);
      const fill = async (amount: string, name: string) => {
        await form.getByLabel('Amount (cSTABLE)').fill(amount);
        await form.getByLabel('Recipient name').fill(name);
        await form.getByLabel('Address line 1').fill('1 Main Street');
        await form.getByLabel('City').fill('Springfield');
        await form.getByLabel('State or region').fill('IL');
        await form.getByRole('button', { name: 'Escrow and create letter' }).click();
      };
      // More than the wallet holds: the service refuses, naming both amounts.
      await fill('5000', `Al Amount ${width}`);
      const refusal = form.getByRole('alert');
      await refusal.waitFor({ timeout: 60_000 });
      const refusalText = (await refusal.textContent()) ?? '';
      expect(refusalText).toContain('5,000.00');
      expect(refusalText).not.toContain('5000');
      await screenshot(page, `amount-refusal-${width}`);

      await fill('5', `Al Amount ${width}`);
      const panel = page.getByRole('region', { name: 'Letter ready' });
      await panel.waitFor({ timeout: 60_000 });
      expect(await panel.textContent()).toContain('5.00 cSTABLE');
      const card = page.getByRole('article', { name: `To Al Amount ${width}` });
      await expect
        .poll(() => card.locator('.letter-amount').textContent(), { timeout: 30_000 })
        .toBe('5.00 cSTABLE');
      await finish(session, `amount-one-format-${width}`);
    }
  });

  it('a voided letter’s claim page does not say “until you claim it”', async () => {
    const letter = await createLetter(owner, everyday.id, '1', 'Vera Void');
    await owner.call('POST', `/transfer/letter/${letter.id}/void`, {});
    for (const width of WIDTHS) {
      const session = await openSession(browser, viewportOf(width));
      const { page } = session;
      await page.goto(letter.claimUrl);
      const preview = page.getByRole('region', { name: 'A letter of value for Vera Void' });
      await preview.waitFor();
      const text = (await preview.textContent()) ?? '';
      expect(text).not.toContain('until you claim it');
      await finish(session, `claim-voided-amount-${width}`);
    }
  });

  it('a mailed-then-voided letter reads cancelled, not “not yet posted”, and its mail.status says so', async () => {
    const { letter } = await owner.call<{ letter: { id: string } }>('POST', '/transfer/letter', {
      walletId: everyday.id,
      amount: '1',
      recipient: {
        name: 'Cal Cancelled',
        address: { line1: '5 Elm Street', city: 'Austin', region: 'TX', postal: '73301', country: 'US' },
      },
      claimOrigin: 'https://pay.example.com',
    });
    await owner.call('POST', `/transfer/letter/${letter.id}/mail`, { deliveryMethod: 'standard' });
    await owner.call('POST', `/transfer/letter/${letter.id}/void`, { acknowledgeMailed: true });
    const read = await owner.call<{ letter: { status: string; mail: { status: string } } }>(
      'GET',
      `/transfer/letter/${letter.id}`,
    );
    expect(read.letter).toMatchObject({ status: 'VOIDED', mail: { status: 'cancelled' } });
    for (const width of WIDTHS) {
      const session = await signedInSession(browser, owner, viewportOf(width));
      const { page } = session;
      await page.goto('/#/letters');
      const mail = page.getByRole('article', { name: 'To Cal Cancelled' }).locator('dd.mail');
      await mail.waitFor();
      const text = (await mail.textContent()) ?? '';
      expect(text).toContain('cancelled before posting');
      expect(text).not.toContain('not yet posted');
      expect(text).not.toContain('expected');
      await mail.scrollIntoViewIfNeeded();
      await finish(session, `mailed-voided-letter-${width}`);
    }
  });
});
