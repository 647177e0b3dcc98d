/**
 * Letters a sender can trust (issue 16, item 8): "Mail it" only where mailing can work and why not otherwise,
 * the sender's own amount, "Voided (refunded)" only once the refund is confirmed, no PDF for dead codes, open
 * details that stay open across refreshes, and on a phone the list before the create form.
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
  openSession,
  type Session,
  screenshot,
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

interface LetterRef {
  id: string;
  claimCode: string;
}

/** A signed-in page of `client`'s account (its session cookie). */
async function pageOf(client: ApiClient, width = 1280): Promise<Session> {
  const session = await openSession(browser, { width, height: width < 600 ? 812 : 900 });
  const [name, value] = client.cookie.split('=');
  await session.context.addCookies([{ name: name ?? '', value: value ?? '', url: BASE_URL }]);
  return session;
}

async function openLetters(page: Page): Promise<void> {
  await page.goto('/#/letters');
  await page.getByRole('heading', { name: 'Letters of value', level: 1 }).waitFor();
  await page.locator('article.letter').first().waitFor();
}

async function letterWithOrigin(
  client: ApiClient,
  walletId: string,
  name: string,
  claimOrigin: string,
): Promise<LetterRef> {
  const { letter } = await client.call<{ letter: LetterRef }>('POST', '/transfer/letter', {
    walletId,
    amount: '1.25',
    recipient: {
      name,
      address: { line1: '5 Elm Street', city: 'Austin', region: 'TX', postal: '73301', country: 'US' },
    },
    claimOrigin,
  });
  return letter;
}

/** Waits until the API shows the letter's refund leg confirmed. */
async function refundConfirmed(client: ApiClient, letterId: string): Promise<void> {
  await expect
    .poll(
      async () =>
        (
          await client.call<{ letter: { refund: { status: string } | null } }>(
            'GET',
            `/transfer/letter/${letterId}`,
          )
        ).letter.refund?.status,
      { timeout: 60_000, interval: 300 },
    )
    .toMatch(/^(CONFIRMED|SETTLED)$/);
}

describe('letters a sender can trust', () => {
  it('offers Mail it only for a public https link, says why not otherwise, and shows the sender the amount', async () => {
    const sender = new ApiClient();
    await sender.signUp(uniqueEmail('trust-mail'));
    const wallet = await sender.fundedWallet('30', '20');
    await createLetter(sender, wallet.id, '2.5', 'Lou Local', 'Sealed words');
    await letterWithOrigin(sender, wallet.id, 'Pat Public', 'https://pay.example.com');

    for (const width of [1280, 375]) {
      const session = await pageOf(sender, width);
      const { page } = session;
      await openLetters(page);
      const local = page.getByRole('article', { name: 'To Lou Local' });
      // The service runs at http://localhost here: a printed QR of this link would open nowhere else.
      expect(await local.getByRole('button', { name: 'Mail it' }).count()).toBe(0);
      await local
        .getByText(/cannot be mailed: its claim link \(http:\/\/localhost:\d+\) only opens on this computer/)
        .waitFor();
      await local.getByText('Download the PDF and post it yourself, or hand over the code or QR.').waitFor();
      // The sender's own amount, from their escrow transaction; the memo stays sealed as the interface says.
      await expect.poll(() => local.locator('dd.letter-amount').textContent()).toMatch(/^2\.50? cSTABLE$/);
      expect(await local.locator('dd.letter-memo').textContent()).toMatch(/^Sealed until claimed/);

      const publicLetter = page.getByRole('article', { name: 'To Pat Public' });
      await publicLetter.getByRole('button', { name: 'Mail it' }).waitFor();
      expect(await publicLetter.locator('.mail-unavailable').count()).toBe(0);
      await expect
        .poll(() => publicLetter.locator('dd.letter-amount').textContent())
        .toMatch(/^1\.25 cSTABLE$/);
      await finish(session, `letters-trust-mail-${width}`);
    }
  });

  it('stops offering Mail it on every card once the service says it has no print provider', async () => {
    const sender = new ApiClient();
    await sender.signUp(uniqueEmail('trust-noprint'));
    const wallet = await sender.fundedWallet('30', '20');
    await letterWithOrigin(sender, wallet.id, 'Ann One', 'https://pay.example.com');
    await letterWithOrigin(sender, wallet.id, 'Ben Two', 'https://pay.example.com');
    const session = await pageOf(sender);
    const { page } = session;
    // A deployment without a print provider (no LOB_API_KEY off the sandbox networks) answers the mail route so.
    await page.route('**/api/v1/transfer/letter/*/mail', (route) =>
      route.fulfill({
        status: 503,
        json: {
          ok: false,
          error: {
            code: 'mail_provider_not_configured',
            message: 'Mailing is not configured: LOB_API_KEY is not set.',
          },
        },
      }),
    );
    await openLetters(page);
    const ann = page.getByRole('article', { name: 'To Ann One' });
    await ann.getByRole('button', { name: 'Mail it' }).click();
    await ann.getByRole('button', { name: 'Send to the printer' }).click();
    for (const name of ['To Ann One', 'To Ben Two']) {
      const card = page.getByRole('article', { name });
      await card.getByText('This service has no printing and posting partner set up').waitFor();
      expect(await card.getByRole('button', { name: 'Mail it' }).count(), name).toBe(0);
    }
    // The 503 the route answered on purpose is logged by the browser; nothing else may be.
    const expected = /Failed to load resource: the server responded with a status of 503/;
    session.problems.splice(0, session.problems.length, ...session.problems.filter((p) => !expected.test(p)));
    await finish(session, 'letters-trust-no-printer');
  });

  it('says Voided (refunded) only once the refund is confirmed, and offers no PDF or code for dead letters', async () => {
    const sender = new ApiClient();
    await sender.signUp(uniqueEmail('trust-void'));
    const wallet = await sender.fundedWallet('30', '20');
    const voided = await createLetter(sender, wallet.id, '1', 'Vic Voided');
    const claimed = await createLetter(sender, wallet.id, '1', 'Cleo Claimed');
    await createLetter(sender, wallet.id, '1', 'Lia Live');
    await sender.call('POST', `/transfer/letter/${voided.id}/void`, {});
    await refundConfirmed(sender, voided.id);
    const claimer = new ApiClient();
    await claimer.signUp(uniqueEmail('trust-claimer'));
    const { wallet: into } = await claimer.call<{ wallet: { id: string } }>('POST', '/wallets', {
      type: 'CUSTODIAL',
    });
    await claimer.call('POST', '/transfer/letter/claim', { claimCode: claimed.claimCode, walletId: into.id });

    const session = await pageOf(sender);
    const { page } = session;
    // First as if the refund were still on its way: the list answer with the refund leg not yet confirmed.
    await page.route('**/api/v1/transfer/letter?*', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as {
        data: { items: { id: string; refund: { status: string } | null }[] };
      };
      for (const item of body.data.items) if (item.refund) item.refund.status = 'PENDING';
      await route.fulfill({ response, json: body });
    });
    await openLetters(page);
    const card = page.getByRole('article', { name: 'To Vic Voided' });
    expect(await card.locator('.badge').first().textContent()).toBe('Voided (refund on its way)');
    await page.unroute('**/api/v1/transfer/letter?*');

    await page.reload();
    await page.locator('article.letter').first().waitFor();
    expect(await card.locator('.badge').first().textContent()).toBe('Voided (refunded)');
    // Dead codes: neither a PDF nor the code, link and QR.
    for (const name of ['To Vic Voided', 'To Cleo Claimed']) {
      const dead = page.getByRole('article', { name });
      expect(await dead.getByRole('button', { name: /Download PDF/ }).count(), name).toBe(0);
      expect(await dead.getByText('Claim code, link and QR').count(), name).toBe(0);
    }
    const claimedCard = page.getByRole('article', { name: 'To Cleo Claimed' });
    expect(await claimedCard.locator('.badge').first().textContent()).toBe('Claimed');
    expect(await claimedCard.locator('dd.letter-amount').textContent()).toMatch(/^1(\.0+)? cSTABLE$/);
    // A live letter keeps its PDF.
    await page
      .getByRole('article', { name: 'To Lia Live' })
      .getByRole('button', { name: 'Download PDF of the letter for Lia Live' })
      .waitFor();
    await finish(session, 'letters-trust-void');
  });

  it('keeps an opened details section open when its letter changes, and lists letters before the form on a phone', async () => {
    const sender = new ApiClient();
    await sender.signUp(uniqueEmail('trust-open'));
    const wallet = await sender.fundedWallet('30', '20');
    const letter = await createLetter(sender, wallet.id, '1', 'Otto Open');

    const session = await pageOf(sender, 375);
    const { page } = session;
    await openLetters(page);
    // On a phone the list comes first, then the form.
    const listTop = await page.getByRole('region', { name: 'Your letters' }).boundingBox();
    const formTop = await page.getByRole('region', { name: 'New letter' }).boundingBox();
    expect(listTop && formTop && listTop.y < formTop.y).toBe(true);
    await screenshot(page, 'letters-trust-list-first-375');

    const card = page.getByRole('article', { name: 'To Otto Open' });
    await card.getByText('On-chain legs').click();
    expect(await card.locator('details', { hasText: 'On-chain legs' }).getAttribute('open')).toBe('');
    // The letter changes (voided elsewhere); the next refresh rebuilds its card with the legs still open.
    await sender.call('POST', `/transfer/letter/${letter.id}/void`, {});
    await expect
      .poll(() => card.getAttribute('data-status'), { timeout: 30_000, interval: 500 })
      .toBe('VOIDED');
    expect(await card.locator('details', { hasText: 'On-chain legs' }).getAttribute('open')).toBe('');
    await card.getByText(/^Refund: /).waitFor();
    await finish(session, 'letters-trust-open-375');
  });
});
