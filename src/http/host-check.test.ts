/**
 * DNS rebinding (issue 36 item 3): a page on attacker.example whose name is made to resolve to 127.0.0.1 reaches a
 * service bound to the loopback with `Host: attacker.example`, and read a password reset link from the mailbox.
 * Bound to the loopback, the service answers only its own names: the public origin's host and the loopback names.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, errorOf, signup, type TestContext } from '../../test/harness.ts';
import { deliverDueEmails } from '../modules/notifications/notifications.service.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const MAILBOX = '/api/v1/sandbox/mailbox';

/** Every kind of route: the mailbox, the API, the web app, the claim page, the reference, the document, a probe. */
const ROUTES = [
  '/api/v1/sandbox/mailbox',
  '/api/v1/me',
  '/',
  '/claim',
  '/docs/',
  '/api/v1/openapi.json',
  '/api/v1/sandbox',
];

const FOREIGN_HOSTS = [
  'attacker.example',
  'attacker.example:8080',
  'ATTACKER.example.',
  'localhost.attacker.example',
  '127.0.0.1.attacker.example',
  'localhost@attacker.example',
  'attacker.example@localhost',
  '10.0.0.5:8080',
  '[2001:db8::1]:8080',
  '[::1]@attacker.example',
];

/** A request from the loopback (as `app.inject` sends by default) with the given `Host`. */
function from(ctx: TestContext, url: string, host: string) {
  return ctx.app.inject({ url, headers: { host }, remoteAddress: '127.0.0.1' });
}

/** A service with `env`, and a password reset link in its local mailbox. */
async function withResetLink(env: Record<string, string>): Promise<TestContext> {
  const ctx = await createTestContext({ env });
  const caller = await signup(ctx.app);
  await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password/forgot',
    payload: { email: caller.email },
  });
  await deliverDueEmails(ctx.deps, quiet);
  return ctx;
}

describe('bound to the loopback (the default HOST, 127.0.0.1)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await withResetLink({ PUBLIC_ORIGIN: 'https://pay.example.com' });
  });
  afterAll(() => ctx.close());

  it('refuses every route to a Host that is neither the public origin nor a loopback name: 421', async () => {
    for (const url of ROUTES) {
      for (const host of FOREIGN_HOSTS) {
        const response = await from(ctx, url, host);
        expect(response.statusCode, `${host} ${url}`).toBe(421);
        // The sandbox probe answers flat, every other route in the envelope.
        if (url === '/api/v1/sandbox') expect(response.json()).toMatchObject({ ok: false });
        else expect(errorOf(response), `${host} ${url}`).toMatchObject({ code: 'misdirected_request' });
        expect(response.body).not.toContain('reset-password');
      }
    }
  });

  it("serves the public origin's host and the loopback names, with any port", async () => {
    const hosts = [
      'pay.example.com',
      'PAY.example.com:443',
      'pay.example.com.',
      'localhost',
      'localhost:8080',
      'app.localhost:5173',
      '127.0.0.1',
      '127.0.0.1:8080',
      '127.9.9.9:1',
      '[::1]',
      '[::1]:8080',
    ];
    for (const host of hosts) {
      for (const url of ROUTES) {
        // Served: answered by the route itself (`/me` without a credential is its own 401).
        expect((await from(ctx, url, host)).statusCode, `${host} ${url}`).not.toBe(421);
      }
      const mailbox = await from(ctx, MAILBOX, host);
      expect(mailbox.body, host).toContain('reset-password');
    }
  });

  it('answers the probes to a curl of 127.0.0.1', async () => {
    expect((await from(ctx, '/healthz', '127.0.0.1:8080')).statusCode).toBe(200);
    // Without a chain the service is not ready: it says so, rather than refusing the name.
    expect((await from(ctx, '/readyz', '127.0.0.1:8080')).statusCode).toBe(503);
    expect((await from(ctx, '/healthz', 'attacker.example')).statusCode).toBe(421);
  });

  it('documents 421 misdirected_request on every operation of the document', async () => {
    const document = (await from(ctx, '/api/v1/openapi.json', 'localhost')).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>>;
    };
    const missing = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method, operation]) => {
          const refusal = operation.responses['421'];
          // The flat probes document their flat error shape, without codes.
          const flat = path === '/sandbox' && (method === 'get' || method === 'post');
          return flat ? refusal === undefined : !refusal?.['x-error-codes']?.includes('misdirected_request');
        })
        .map(([method]) => `${method} ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('refuses a foreign Host over a real socket too', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          { port, host: '127.0.0.1', path: MAILBOX, headers: { host } },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => {
              body += chunk.toString('utf8');
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end();
      });
    const refused = await get(`attacker.example:${port}`);
    expect(refused.status).toBe(421);
    expect(JSON.parse(refused.body)).toMatchObject({ ok: false, error: { code: 'misdirected_request' } });
    expect((await get(`localhost:${port}`)).body).toContain('reset-password');
  });
});

describe('bound to every address (HOST=0.0.0.0)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await withResetLink({ HOST: '0.0.0.0', PUBLIC_ORIGIN: 'https://pay.example.com' });
  });
  afterAll(() => ctx.close());

  it('serves any Host (a proxy in front may name the service as it likes)', async () => {
    for (const url of ROUTES.filter((route) => route !== MAILBOX)) {
      expect((await from(ctx, url, 'sealpay-upstream:8080')).statusCode, url).not.toBe(421);
    }
  });

  it("still reads the local mailbox only to the origin's host and the loopback names", async () => {
    for (const host of FOREIGN_HOSTS) {
      const response = await from(ctx, MAILBOX, host);
      expect(errorOf(response), host).toMatchObject({ status: 404, code: 'not_found' });
      expect(response.body).not.toContain('reset-password');
    }
    for (const host of ['pay.example.com', 'localhost:8080', '127.0.0.1', '[::1]:8080']) {
      expect((await from(ctx, MAILBOX, host)).body, host).toContain('reset-password');
    }
  });
});
