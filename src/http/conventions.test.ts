import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, errorOf, signup, type TestContext } from '../../test/harness.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('interface conventions', () => {
  it('answers an unknown route with the envelope 404 not_found', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/no-such-thing' });
    expect(response.statusCode).toBe(404);
    expect(errorOf(response).code).toBe('not_found');
  });

  it('refuses a body that is not JSON with 415 unsupported_media_type', async () => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({
      method: 'PATCH',
      url: '/api/v1/me',
      headers: { ...caller.headers, 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(response.statusCode).toBe(415);
    expect(errorOf(response).code).toBe('unsupported_media_type');
  });

  it('answers unparseable JSON with 400 invalid_json', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": ',
    });
    expect(response.statusCode).toBe(400);
    expect(errorOf(response).code).toBe('invalid_json');
  });

  it('answers a schema violation with validation_error and [{path, message}] details', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email: 'not-an-email', password: { nested: true } },
    });
    const error = errorOf(response);
    expect(response.statusCode).toBe(400);
    expect(error.code).toBe('validation_error');
    expect(error.details).toEqual(
      expect.arrayContaining([
        { path: 'email', message: expect.any(String) },
        { path: 'password', message: expect.any(String) },
      ]),
    );
  });

  it('names a missing required field in the details path', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'a@b.co' },
    });
    expect(errorOf(response).details).toEqual([{ path: 'password', message: expect.any(String) }]);
  });

  it('writes timestamps as ISO 8601 UTC with milliseconds', async () => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/me', headers: caller.headers });
    expect(response.json().data.user.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('serves the OpenAPI 3.1 document with every foundation route', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const document = response.json();
    expect(document.openapi).toBe('3.1.0');
    for (const path of [
      '/auth/signup',
      '/auth/login',
      '/auth/logout',
      '/auth/session',
      '/me',
      '/me/password',
      '/keys',
      '/keys/{id}',
      '/sandbox',
    ]) {
      expect(Object.keys(document.paths)).toContain(path);
    }
    expect(document.paths['/keys'].post.security).toEqual([{ session: [] }]);
  });

  it("documents the mail route's answers when the print provider fails: 500 retryable, 503 not configured", async () => {
    const document = (await ctx.app.inject({ url: '/api/v1/openapi.json' })).json();
    const mail = document.paths['/transfer/letter/{id}/mail'].post;
    expect(mail.responses['500'].description).toMatch(/internal_error.*retry/s);
    expect(mail.responses['503'].description).toContain('mail_provider_not_configured');
    expect(mail.requestBody.required).toBe(false);
  });

  it('serves liveness, readiness and metrics outside the API', async () => {
    expect((await ctx.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const metrics = await ctx.app.inject({ url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    // The healthz request above was observed, with its route and status as labels.
    expect(metrics.body).toMatch(
      /sealpay_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} [1-9]/,
    );
    const docs = await ctx.app.inject({ url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
  });
});

describe('sandbox probes', () => {
  it('GET /sandbox is flat and reports v1', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/api/v1/sandbox' });
    const body = response.json();
    expect(response.statusCode).toBe(200);
    expect(body).toMatchObject({ ok: true, service: 'sealpay', version: 'v1', environment: 'sandbox' });
    expect(body.data).toBeUndefined();
  });

  it.each([{ a: [1, 'two', null] }, [1, 2], 'text', 7, null])(
    'POST /sandbox echoes %j flat',
    async (echo) => {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/sandbox',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(echo),
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({ ok: true, service: 'sealpay', version: 'v1' });
      expect(body.echo).toEqual(echo);
      expect(body.timestamp).toMatch(/Z$/);
    },
  );

  it('POST /sandbox with invalid JSON answers flat 400 {ok: false, error: string}', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/sandbox',
      headers: { 'content-type': 'application/json' },
      payload: '{nope',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ ok: false, error: expect.any(String) });
  });
});
