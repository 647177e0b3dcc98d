import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../../test/harness.ts';
import { buildWeb, computeWebStamp, isWebBuildFresh } from '../../../web/build.ts';
import type { Deps } from '../../deps.ts';
import type { App } from '../../http/types.ts';
import { CONTENT_SECURITY_POLICY, registerWebRoutes } from './web.routes.ts';

let ctx: TestContext;

beforeAll(async () => {
  await buildWeb({ log: () => {} }); // a no-op after `npm test`'s pretest build
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx?.close();
});

const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>/i;

describe('web app serving', () => {
  it('serves the dashboard at / with no-cache and a strict CSP, and no inline script', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toBe(CONTENT_SECURITY_POLICY);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.body).toMatch(/<script type="module" crossorigin src="\/assets\/[^"]+\.js"><\/script>/);
    expect(response.body).not.toMatch(INLINE_SCRIPT);
    expect(response.body).not.toMatch(/\sstyle=/);
  });

  it('serves the claim page at /claim (and /claim/), a separate entry', async () => {
    for (const url of ['/claim', '/claim/', '/claim?x=1']) {
      const response = await ctx.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body).toContain('<title>Claim a letter of value · sealpay</title>');
      expect(response.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(response.body).not.toMatch(INLINE_SCRIPT);
    }
  });

  it('serves hashed assets with a long immutable cache, and unknown assets as the JSON 404', async () => {
    const html = (await ctx.app.inject({ method: 'GET', url: '/' })).body;
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const response = await ctx.app.inject({ method: 'GET', url: asset as string });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await ctx.app.inject({ method: 'GET', url: '/assets/nope-123.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('leaves the API, docs and probes alone: unknown /api/v1 paths keep their JSON 404 envelope', async () => {
    const unknown = await ctx.app.inject({ method: 'GET', url: '/api/v1/does-not-exist' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/application\/json/);
    expect(unknown.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const post = await ctx.app.inject({ method: 'POST', url: '/api/v1/claim', payload: {} });
    expect(post.json()).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ ok: true });
    expect((await ctx.app.inject({ method: 'GET', url: '/api/v1/sandbox' })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: '/docs/' })).statusCode).toBe(200);
    const openapi = (await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(
      Object.keys(openapi.paths).some((p) => p === '/' || p.startsWith('/claim') || p.startsWith('/assets')),
    ).toBe(false);
  });

  it('answers 503 with a hint when the app is not built', async () => {
    const app = Fastify();
    await registerWebRoutes(app as unknown as App, {} as Deps, {
      distDir: path.join(mkdtempSync(path.join(tmpdir(), 'sealpay-web-')), 'dist'),
    });
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('npm run build');
    await app.close();
  });
});

describe('web build', () => {
  it('is skipped when the sources are unchanged (hash stamp)', async () => {
    expect(isWebBuildFresh()).toBe(true);
    expect(computeWebStamp()).toBe(computeWebStamp());
    const again = await buildWeb({ log: () => {} });
    expect(again.built).toBe(false);
  });
});
