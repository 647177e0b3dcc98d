/**
 * Issue 36, item 10: a letter is escrowed once. The form sends an Idempotency-Key, the same when the same letter is
 * asked for again after an answer that never came (one letter), and after `502 escrow_unsettled` (the sandbox's
 * `…505` amounts) it follows the letter being settled, with no button inviting a second press, until it is ready.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  allowProblems,
  captureFailures,
  finish,
  launch,
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

async function fillLetter(page: Page, amount: string, name: string): Promise<void> {
  await page.goto('/#/letters');
  const form = page.getByRole('form', { name: 'Create a letter of value' });
  await form.getByLabel('Amount (cSTABLE)').fill(amount);
  await form.getByLabel('Recipient name').fill(name);
  await form.getByLabel('Address line 1').fill('3 Quay Street');
  await form.getByLabel('City').fill('Bristol');
  await form.getByLabel('State or region').fill('Avon');
}

async function lettersOf(client: ApiClient): Promise<{ id: string; status: string }[]> {
  return (await client.call<{ items: { id: string; status: string }[] }>('GET', '/transfer/letter')).items;
}

describe('a letter is escrowed once', () => {
  it('asks again for the same letter with the same Idempotency-Key after a lost answer: one letter', async () => {
    for (const width of WIDTHS) {
      const sender = new ApiClient();
      await sender.signUp(uniqueEmail('letter-key'));
      await sender.fundedWallet('30', '20');
      const session = await signedInSession(browser, sender, viewportOf(width));
      const { page } = session;
      // The first creation reaches the service (it escrows the letter), but its answer is lost on the way back, and
      // the connection stays down for whatever the page sends again by itself, until the person presses again.
      const keys: string[] = [];
      let connected = false;
      await page.route('**/api/v1/transfer/letter', async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        keys.push((await route.request().allHeaders())['idempotency-key'] ?? '');
        if (connected) return route.continue();
        if (keys.length === 1) await route.fetch();
        await route.abort('connectionreset');
      });
      await fillLetter(page, '2', 'Ivy Once');
      const form = page.getByRole('form', { name: 'Create a letter of value' });
      const submit = form.getByRole('button', { name: 'Escrow and create letter' });
      await submit.click();
      await form.getByRole('alert').waitFor({ timeout: 60_000 });
      await screenshot(page, `letter-once-lost-answer-${width}`);
      // The person presses again with the same details: the service answers the letter it made.
      connected = true;
      await submit.click();
      await form.getByRole('heading', { name: 'Letter ready' }).waitFor({ timeout: 60_000 });
      const intent = keys.length;
      expect(intent).toBeGreaterThanOrEqual(2);
      expect(keys[0]).toMatch(/.{8,}/);
      expect(new Set(keys)).toEqual(new Set([keys[0]]));
      const letters = await lettersOf(sender);
      expect(letters).toHaveLength(1);

      // A new letter is a new intent: a new key.
      await fillLetter(page, '1', 'Ivy Twice');
      await form.getByRole('button', { name: 'Escrow and create letter' }).click();
      await expect.poll(() => lettersOf(sender).then((all) => all.length), { timeout: 60_000 }).toBe(2);
      expect(keys).toHaveLength(intent + 1);
      expect(keys[intent]).not.toBe(keys[0]);
      allowProblems(session, /net::ERR_CONNECTION_RESET/);
      await finish(session, `letter-once-retried-${width}`);
    }
  });

  it('follows a letter answered 502 escrow_unsettled until it is ready, offering no second press', async () => {
    for (const width of WIDTHS) {
      const sender = new ApiClient();
      await sender.signUp(uniqueEmail('letter-unsettled'));
      await sender.fundedWallet('30', '20');
      const session = await signedInSession(browser, sender, viewportOf(width));
      const { page } = session;
      await fillLetter(page, '1.000505', 'Una Settled');
      const form = page.getByRole('form', { name: 'Create a letter of value' });
      const submit = form.getByRole('button', { name: 'Escrow and create letter' });
      const [answer] = await Promise.all([
        page.waitForResponse(
          (r) => r.request().method() === 'POST' && r.url().endsWith('/api/v1/transfer/letter'),
          { timeout: 90_000 },
        ),
        submit.click(),
      ]);
      expect(answer.status()).toBe(502);
      const { error } = (await answer.json()) as { error: { code: string; details: { letterId: string } } };
      expect(error.code).toBe('escrow_unsettled');

      // The letter being settled, followed: no button to press a second time meanwhile.
      const settling = form.getByRole('region', { name: 'Letter being escrowed' });
      await settling.waitFor();
      expect(await settling.getAttribute('data-letter-id')).toBe(error.details.letterId);
      expect(await settling.textContent()).toContain('Una Settled');
      expect(await submit.isDisabled()).toBe(true);
      await screenshot(page, `letter-unsettled-following-${width}`);
      await form.getByRole('heading', { name: 'Letter ready' }).waitFor({ timeout: 90_000 });
      expect(await form.getByLabel('Recipient name').inputValue()).toBe('');
      expect(await submit.isEnabled()).toBe(true);
      const letters = await lettersOf(sender);
      expect(letters.map((l) => [l.id, l.status])).toEqual([[error.details.letterId, 'ESCROWED']]);
      // The browser logs the 502 the service answered on purpose; nothing else may be.
      allowProblems(session, /status of 502/);
      await finish(session, `letter-unsettled-ready-${width}`);
    }
  });
});
