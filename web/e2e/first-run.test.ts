/**
 * First run (issue 16, item 11): the fund → mint → send guide on an empty account, sign-up and log-in alike,
 * log-out back to Log in, header and sandbox banner within about 120 px on a phone, long addresses cut in the
 * middle with a copy button.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addWallet,
  BASE_URL,
  captureFailures,
  finish,
  launch,
  logOut,
  move,
  openSession,
  screenshot,
  signUpInPage,
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

/** The computed look of a control: what makes two buttons look alike or not. */
async function look(control: Locator) {
  return await control.evaluate((element) => {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return {
      height: Math.round(box.height),
      fontSize: style.fontSize,
      fontWeight: style.fontWeight,
      borderTopWidth: style.borderTopWidth,
      borderColor: style.borderTopColor,
    };
  });
}

/** The bottom edge of the header and the notices under it. */
async function chromeBottom(page: Page): Promise<number> {
  return await page.evaluate(() => {
    const header = document.querySelector('header.top')?.getBoundingClientRect().bottom ?? 0;
    const notices = document.querySelector('.banner-slot')?.getBoundingClientRect().bottom ?? 0;
    return Math.max(header, notices);
  });
}

describe('first run', () => {
  it('shows sign-up and log-in alike, guides an empty account through fund, mint, send, and logs out to Log in', async () => {
    const session = await openSession(browser);
    const { page } = session;
    await page.goto('/');
    const signupTab = page.getByRole('button', { name: 'Create an account' });
    const loginTab = page.getByRole('button', { name: 'Log in', exact: true }).first();
    // The two tabs are one switch: same size and type, only the current one pressed.
    const [signupLook, loginLook] = [await look(signupTab), await look(loginTab)];
    expect(signupLook).toEqual(loginLook);
    const signupWidth = (await signupTab.boundingBox())?.width ?? 0;
    const loginWidth = (await loginTab.boundingBox())?.width ?? 0;
    expect(Math.abs(signupWidth - loginWidth)).toBeLessThanOrEqual(1);
    expect(await signupTab.getAttribute('aria-pressed')).toBe('true');
    const createButton = await look(page.getByRole('button', { name: 'Create account', exact: true }));
    const createBackground = await page
      .getByRole('button', { name: 'Create account', exact: true })
      .evaluate((b) => getComputedStyle(b).backgroundColor);
    await loginTab.click();
    const loginForm = page.getByRole('form', { name: 'Log in' });
    const submitLook = await look(loginForm.getByRole('button', { name: 'Log in' }));
    const submitBackground = await loginForm
      .getByRole('button', { name: 'Log in' })
      .evaluate((b) => getComputedStyle(b).backgroundColor);
    // Both forms end in the same primary button.
    expect(submitLook).toEqual(createButton);
    expect(submitBackground).toBe(createBackground);
    await screenshot(page, 'first-run-login-1280');

    await page.getByRole('button', { name: 'Create an account' }).click();
    const email = uniqueEmail('first-run');
    await signUpInPage(page, email);
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    const guide = page.getByRole('region', { name: 'Getting started: fund, mint, send' });
    await guide.waitFor();
    const steps = guide.getByRole('listitem');
    expect(await steps.count()).toBe(3);
    expect(await steps.nth(0).textContent()).toMatch(/^Fund a wallet: /);
    expect(await steps.nth(1).textContent()).toMatch(/^Mint confidential cSTABLE: /);
    expect(await steps.nth(2).textContent()).toMatch(/^Send it: /);
    await screenshot(page, 'first-run-guide-1280');

    // Funding ticks the first step off.
    await addWallet(page, 'Everyday');
    await move(page, 'Fund', 'Everyday', '5');
    await expect
      .poll(() => steps.nth(0).textContent(), { timeout: 30_000, interval: 500 })
      .toBe('Fund a wallet — done.');
    expect(await steps.nth(1).textContent()).toMatch(/^Mint confidential cSTABLE: /);

    // Hidden by the person: stays hidden.
    await guide.getByRole('button', { name: 'Hide this guide' }).click();
    await page.reload();
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    await page.getByRole('article', { name: /^Everyday/ }).waitFor();
    expect(await guide.count()).toBe(0);

    // Logging out returns to Log in, not to Create an account.
    await logOut(page);
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    expect(
      await page.getByRole('button', { name: 'Log in', exact: true }).first().getAttribute('aria-pressed'),
    ).toBe('true');
    expect(await page.getByRole('form', { name: 'Create an account' }).count()).toBe(0);
    await finish(session, 'first-run-logged-out-1280');
  });

  it('keeps header and sandbox banner within 120 px on a phone and cuts long addresses in the middle, with a copy button', async () => {
    const session = await openSession(browser, { width: 375, height: 812 });
    const { page, context } = session;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE_URL });
    await page.goto('/');
    await page.getByRole('form', { name: 'Create an account' }).waitFor();
    expect(await chromeBottom(page)).toBeLessThanOrEqual(120);
    // A long email in the header does not push the header past the limit.
    await signUpInPage(page, uniqueEmail('a-rather-long-name-for-a-phone-screen'));
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();
    expect(await page.locator('.banner-slot .banner').count()).toBeGreaterThan(0);
    expect(await chromeBottom(page)).toBeLessThanOrEqual(120);
    await screenshot(page, 'first-run-header-375');
    // The claim page's header and banner too.
    await page.goto('/claim');
    await page.getByRole('heading', { name: 'Claim your letter of value', level: 1 }).waitFor();
    await page.locator('.banner-slot .banner').waitFor();
    expect(await chromeBottom(page)).toBeLessThanOrEqual(120);
    await page.goto('/#/wallets');
    await page.getByRole('heading', { name: 'Wallets', level: 1 }).waitFor();

    await addWallet(page, 'Phone');
    const card = page.getByRole('article', { name: /^Phone/ });
    const address = card.locator('code.middle-truncated');
    const full = (await address.getAttribute('title')) ?? '';
    expect(full).toMatch(/^0x[0-9a-fA-F]{40}$/);
    // The whole address is in the text (screen readers, selection); on screen the head is cut, the tail shows.
    expect(await address.textContent()).toBe(full);
    const cut = await address.locator('.mt-head').evaluate((head) => head.scrollWidth > head.clientWidth);
    expect(cut).toBe(true);
    expect(await address.locator('.mt-tail').textContent()).toBe(full.slice(-6));
    expect(await address.locator('.mt-tail').isVisible()).toBe(true);
    const box = await address.boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(375);

    await card.getByRole('button', { name: 'Copy address of Phone' }).click();
    await card.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(full);
    await finish(session, 'first-run-address-375');
  });
});
