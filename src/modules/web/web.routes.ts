/**
 * The web app (built by `web/build.ts` into `web/dist`): `/` is the dashboard, `/claim` the public claim page.
 * HTML is never cached and carries a strict Content-Security-Policy (no inline script or style, same-origin
 * everything); hashed assets under `/assets/` are immutable for a year. Lives outside `/api/v1`: unknown API
 * paths keep their JSON 404 envelope.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { App } from '../../http/types.ts';

export const WEB_DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web/dist');

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
].join('; ');

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Claim codes travel in the URL fragment; never leak the page address to other sites.
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy':
    'publickey-credentials-create=(self), publickey-credentials-get=(self), camera=(), microphone=(), geolocation=()',
} as const;

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sealpay</title></head><body>
<h1>The web app is not built</h1><p>Run <code>npm run build</code> (or <code>npm start</code>), then reload.
The API is at <a href="/docs">/docs</a>.</p></body></html>`;

export interface WebRoutesOptions {
  /** The built app; default `web/dist`. */
  distDir?: string;
}

export async function registerWebRoutes(
  app: App,
  _deps: Deps,
  options: WebRoutesOptions = {},
): Promise<void> {
  const distDir = options.distDir ?? WEB_DIST_DIR;
  const assetsDir = path.join(distDir, 'assets');

  if (existsSync(assetsDir)) {
    await app.register(fastifyStatic, {
      root: assetsDir,
      prefix: '/assets/',
      decorateReply: false,
      index: false,
      wildcard: true,
      immutable: true,
      maxAge: '365d',
      cacheControl: true,
      dotfiles: 'deny',
      setHeaders: (reply) => {
        reply.header('x-content-type-options', 'nosniff');
      },
    });
  }

  const sendHtml = async (reply: FastifyReply, file: string) => {
    let html: string;
    try {
      html = await readFile(path.join(distDir, file), 'utf8');
    } catch {
      return reply.code(503).headers(HTML_HEADERS).send(NOT_BUILT);
    }
    return reply.code(200).headers(HTML_HEADERS).send(html);
  };

  const hidden = { schema: { hide: true } };
  for (const url of ['/', '/index.html']) {
    app.get(url, hidden, async (_request, reply) => sendHtml(reply, 'index.html'));
  }
  for (const url of ['/claim', '/claim/', '/claim.html']) {
    app.get(url, hidden, async (_request, reply) => sendHtml(reply, 'claim.html'));
  }
}
