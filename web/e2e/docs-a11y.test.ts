/**
 * Issue 25 item 16: the API reference at `/docs` (Scalar, configured in `src/http/api-reference.ts`) is in English
 * (`<html lang="en">`) and has no critical and no serious axe finding at 1280 and 375 px (before: 4 critical
 * unnamed copy buttons, 31 serious: contrast of Scalar's greys and method badges, 22 px targets, no language).
 */
import AxeBuilder from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureFailures, finish, launch, openSession } from './helpers.ts';

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

let browser: Browser;
captureFailures();
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe('/docs, the API reference', () => {
  for (const width of [1280, 375]) {
    it(`is in English, with no critical or serious axe finding at ${width} px`, async () => {
      const session = await openSession(browser, { width, height: width < 600 ? 812 : 900 });
      const { page } = session;
      // Scalar's bundle is large: allow a loaded machine time to fetch and render it.
      page.setDefaultTimeout(90_000);
      await page.goto('/docs');
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
      expect(await page.title()).toBe('sealpay API reference');
      await page.locator('main.references-rendered').waitFor();
      await page.getByRole('heading', { name: 'sealpay', exact: false }).first().waitFor();
      // Scalar renders in steps: wait until its copy buttons are there (and named).
      await page.locator('button.scalar-code-copy').first().waitFor({ state: 'attached' });
      const results = await new AxeBuilder({ page } as never).withTags(AXE_TAGS).analyze();
      const findings = results.violations
        .filter((v) => v.impact === 'critical' || v.impact === 'serious')
        .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.html.slice(0, 160)).join(' | ')}`);
      expect(findings).toEqual([]);
      expect(await page.locator('button.scalar-code-copy:not([aria-label])').count()).toBe(0);
      await finish(session, `docs-${width}`);
    });
  }
});
