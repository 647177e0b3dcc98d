/**
 * Hostile and careless input at the HTTP layer: every answer is the envelope with a stable code and a 4xx, whatever
 * the layer that refuses it (the parser, the router, the schema, the database, Node's HTTP parser).
 */
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Caller,
  createTestContext,
  errorOf,
  signup,
  type TestContext,
  toWindowStart,
} from '../../test/harness.ts';
import { loadConfig } from '../config.ts';

let ctx: TestContext;
let caller: Caller;

beforeAll(async () => {
  ctx = await createTestContext({
    env: { RATE_LIMIT_READS_PER_MINUTE: '100000', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
  });
  caller = await signup(ctx.app);
});
afterAll(() => ctx.close());

function send(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  return ctx.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: caller.headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

function postText(url: string, text: string) {
  return ctx.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    headers: { 'content-type': 'application/json' },
    payload: text,
  });
}

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

describe('text the database cannot hold', () => {
  it.each([
    ['/auth/login', { email: '\u0000', password: 'x' }, 'email'],
    ['/auth/signup', { email: 'a@example.com', password: 'Correct-Horse-9', name: 'a\u0000b' }, 'name'],
    ['/auth/passkey/options', { email: 'x\u0000@example.com' }, 'email'],
    ['/auth/login', { email: '\ud800@example.com', password: 'x' }, 'email'],
  ])(
    'POST %s with NUL or a lone surrogate is 400 validation_error naming the field',
    async (url, body, path) => {
      const response = await ctx.app.inject({ method: 'POST', url: `/api/v1${url}`, payload: body });
      const error = errorOf(response);
      expect(error).toMatchObject({ status: 400, code: 'validation_error' });
      expect(error.details).toEqual([{ path, message: expect.any(String) }]);
    },
  );

  it('refuses NUL in a property name and in a key name of an authenticated write', async () => {
    expect(errorOf(await send('POST', '/keys', { name: 'k\u0000' }))).toMatchObject({
      status: 400,
      code: 'validation_error',
    });
    expect(errorOf(await send('PATCH', '/me', { 'na\u0000me': 'x' }))).toMatchObject({
      status: 400,
      code: 'validation_error',
    });
  });

  it('refuses NUL in a query string: 400 validation_error', async () => {
    for (const url of ['/transactions?walletId=%00', '/balances?walletId=a%00', '/gas?walletId=%00']) {
      expect(errorOf(await send('GET', url))).toMatchObject({ status: 400, code: 'validation_error' });
    }
    const preview = await ctx.app.inject({ url: '/api/v1/transfer/letter/preview?code=%00' });
    expect(errorOf(preview)).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('still echoes any valid JSON on the sandbox probe (never stored)', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox',
      payload: { a: '\u0000' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().echo).toEqual({ a: '\u0000' });
  });
});

describe('malformed ids read as not found', () => {
  it.each([
    ['GET', '/wallets/%00', 'not_found'],
    ['GET', '/wallets/%ff', 'not_found'],
    ['GET', '/wallets/%E0%A4%A', 'not_found'],
    ['GET', `/wallets/${'a'.repeat(101)}`, 'not_found'],
    ['GET', `/wallets/${'a'.repeat(2000)}`, 'not_found'],
    ['GET', '/transactions/ABC', 'not_found'],
    ['GET', '/transactions/%00/nota', 'not_found'],
    ['DELETE', '/keys/%00', 'not_found'],
    ['GET', '/transfer/letter/%00', 'letter_not_found'],
    ['GET', '/transfer/letter/%ff', 'letter_not_found'],
    ['GET', `/transfer/letter/${'z'.repeat(300)}`, 'letter_not_found'],
    ['POST', '/transfer/letter/%00/void', 'letter_not_found'],
    ['GET', `/transfer/letter/${'z'.repeat(3000)}/pdf`, 'letter_not_found'],
  ] as const)('%s %#: → 404 %s', async (method, url, code) => {
    const response = await send(method, url, method === 'POST' ? {} : undefined);
    expect(errorOf(response)).toMatchObject({ status: 404, code });
    expect(response.body).not.toMatch(/FST_|fastify/i);
  });
});

describe('numbers out of range and deep nesting', () => {
  it.each([
    '/transactions?page=1e400',
    '/transactions?page=99999999999999999999',
    '/transfer/letter?page=99999999999999999999',
    '/transfer/letter?page=1e400',
    '/transactions?pageSize=1e400',
  ])('GET %s → 400 validation_error', async (url) => {
    expect(errorOf(await send('GET', url))).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('still parses query numbers: pageSize=5 is 5', async () => {
    const response = await send('GET', '/transactions?page=1&pageSize=5');
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ page: 1, pageSize: 5 });
  });

  it('refuses JSON nested past the limit: 400 invalid_json, and the sandbox its own flat 400', async () => {
    const login = await postText('/auth/login', `{"email":${nested(4400)},"password":"x"}`);
    expect(errorOf(login)).toMatchObject({ status: 400, code: 'invalid_json' });
    const sandbox = await postText('/sandbox', nested(4400));
    expect(sandbox.statusCode).toBe(400);
    expect(sandbox.json()).toEqual({ ok: false, error: expect.stringContaining('nested') });
    expect((await postText('/sandbox', nested(20))).statusCode).toBe(200);
  });
});

describe('JSON bodies are strict about types', () => {
  it.each([
    ['PATCH', '/me', { name: 42 }, 'name'],
    ['PATCH', '/me', { company: true }, 'company'],
    ['POST', '/keys', { name: 'k', expiresInDays: '7' }, 'expiresInDays'],
    ['POST', '/keys', { name: 42 }, 'name'],
    ['POST', '/wallets', { type: 'CUSTODIAL', label: 7 }, 'label'],
  ] as const)('%s %s %j → 400 validation_error at %s', async (method, url, body, path) => {
    const error = errorOf(await send(method, url, body));
    expect(error).toMatchObject({ status: 400, code: 'validation_error' });
    expect((error.details as Array<{ path: string }>).map((issue) => issue.path)).toContain(path);
  });
});

describe('values outside a list', () => {
  it('are one validation_error detail listing the allowed values, in a query and in a body', async () => {
    const filter = errorOf(await send('GET', '/transactions?type=NOPE'));
    expect(filter).toMatchObject({ status: 400, code: 'validation_error' });
    expect(filter.details).toEqual([{ path: 'type', message: expect.stringContaining('"LETTER_CLAIM"') }]);
    const body = errorOf(await send('POST', '/wallets', { type: 'PAPER' }));
    expect(body).toMatchObject({ status: 400, code: 'validation_error' });
    expect(body.details).toEqual([{ path: 'type', message: 'must be one of "CUSTODIAL", "EXTERNAL"' }]);
  });
});

describe('headers', () => {
  it('every API answer is no-store and nosniff; a sensitive one too', async () => {
    for (const response of [
      await send('GET', '/me'),
      await send('POST', '/keys', { name: 'headers' }),
      await send('POST', '/me/totp/setup'),
      await send('GET', '/wallets/%00'),
    ]) {
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await ctx.app.inject({ url: '/healthz' })).headers['x-content-type-options']).toBe('nosniff');
  });

  it('the API reference forbids framing', async () => {
    const docs = await ctx.app.inject({ url: '/docs' });
    expect(docs.statusCode).toBeLessThan(400);
    expect(docs.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('the API reference runs no inline script but its own bootstrap (by hash), and sends no Referer', async () => {
    const docs = await ctx.app.inject({ url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    const csp = String(docs.headers['content-security-policy']);
    const scriptSrc = /(?:^|;\s*)script-src ([^;]*)/.exec(csp)?.[1]?.split(/\s+/) ?? [];
    expect(scriptSrc).toContain("'self'");
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    const inline = [...docs.body.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
      ([, text]) =>
        `'sha256-${createHash('sha256')
          .update(text ?? '')
          .digest('base64')}'`,
    );
    // Scalar's bootstrap (`Scalar.createApiReference(…)`) is the page's one inline script, and it may run.
    expect(inline).toHaveLength(1);
    expect(scriptSrc).toEqual(expect.arrayContaining(inline));
    expect(docs.headers['referrer-policy']).toBe('no-referrer');
    // The bundle it loads is not a page: nothing inline to allow there.
    const bundle = await ctx.app.inject({ url: '/docs/js/scalar.js' });
    expect(String(bundle.headers['content-security-policy'])).not.toContain('sha256-');
  });

  it('HSTS only when the public origin is https', async () => {
    expect((await send('GET', '/me')).headers['strict-transport-security']).toBeUndefined();
    const https = await createTestContext({ env: { PUBLIC_ORIGIN: 'https://pay.example.com' } });
    try {
      const response = await https.app.inject({ url: '/api/v1/network' });
      expect(response.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    } finally {
      await https.close();
    }
  });

  it('/readyz tells the public which check failed, never its raw message', async () => {
    const response = await ctx.app.inject({ url: '/readyz' });
    // The test context runs without a chain: not ready.
    const error = errorOf(response);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(error.details).toEqual({ database: { ok: true }, chain: { ok: false } });
  });
});

describe('answers outside the router', () => {
  async function raw(request: string): Promise<string> {
    const address = ctx.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.on('data', (chunk) => {
        data += chunk;
      });
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
      socket.write(request);
      setTimeout(() => socket.end(), 500);
    });
  }

  beforeAll(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('malformed HTTP gets the envelope, not Node bare "Client Error"', async () => {
    const answer = await raw('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ ok: false, error: { code: 'invalid_request', message: expect.any(String) } });
  });

  it('oversized headers get the envelope with 431', async () => {
    const answer = await raw(`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toContain('"code":"request_headers_too_large"');
  });

  it('CONNECT gets the envelope instead of a dropped connection', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toContain('"code":"not_found"');
  });

  it('a parser error after an answered request closes the connection without a second answer', async () => {
    const answer = await raw('GET /api/v1/wallets/%ff HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n');
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 404 ']);
  });

  it('a bad percent-encoding over a real socket is the envelope', async () => {
    const answer = await raw('GET /api/v1/wallets/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toContain('"code":"not_found"');
    expect(answer).not.toMatch(/FST_|fastify/i);
    expect(answer).toMatch(/^x-content-type-options: nosniff\r$/im);
    expect(answer).toMatch(/^cache-control: no-store\r$/im);
  });
});

describe('TRUST_PROXY', () => {
  it('takes off, on (one hop), a hop count or proxy addresses, and refuses anything else', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'on' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' }).trustProxy).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
      '::1',
    ]);
    for (const bad of ['everyone', '10.0.0.1/33', '10.0.0.300']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/TRUST_PROXY/);
    }
  });

  it.each([
    ['on', '10.9.9.9'],
    ['10.9.9.0/24', '10.9.9.9'],
  ])(
    'TRUST_PROXY=%s: a client behind the proxy cannot escape the login limit by writing its own X-Forwarded-For',
    async (setting, proxy) => {
      const behind = await createTestContext({ env: { TRUST_PROXY: setting } });
      try {
        const user = await signup(behind.app);
        toWindowStart(behind.clock, 15 * 60_000);
        const login = (forwardedFor: string, password: string) =>
          behind.app.inject({
            method: 'POST',
            url: '/api/v1/auth/login',
            remoteAddress: proxy,
            // The proxy appends the address it saw; everything left of it is whatever the client wrote.
            headers: { 'x-forwarded-for': `${forwardedFor}, 203.0.113.7` },
            payload: { email: user.email, password },
          });
        for (let attempt = 0; attempt < 10; attempt++) {
          expect((await login(`198.51.100.${attempt}`, 'Wrong-Password-1')).statusCode).toBe(401);
        }
        const locked = await login('198.51.100.200', user.password);
        expect(errorOf(locked)).toMatchObject({ status: 401, code: 'invalid_credentials' });
        // Another client behind the same proxy is not locked out.
        const other = await behind.app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          remoteAddress: proxy,
          headers: { 'x-forwarded-for': '203.0.113.8' },
          payload: { email: user.email, password: user.password },
        });
        expect(other.statusCode).toBe(200);
      } finally {
        await behind.close();
      }
    },
  );
});
