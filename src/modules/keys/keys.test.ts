import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyOf, createTestContext, errorOf, signup, type TestContext } from '../../../test/harness.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('API keys', () => {
  it('creates a key shown once: svc_sk_ plus 256 bits, with keyPrefix and metadata', async () => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: caller.headers,
      payload: { name: 'deploy', expiresInDays: 30 },
    });
    expect(response.statusCode).toBe(201);
    const { key, plaintext } = response.json().data;
    expect(plaintext).toMatch(/^svc_sk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(plaintext.slice(7), 'base64url')).toHaveLength(32);
    expect(plaintext.startsWith(key.keyPrefix)).toBe(true);
    expect(key.keyPrefix.length).toBeGreaterThan('svc_sk_'.length);
    expect(key).toMatchObject({ name: 'deploy', lastUsedAt: null, revokedAt: null });
    expect(new Date(key.expiresAt).getTime() - new Date(key.createdAt).getTime()).toBe(30 * 86_400_000);

    const list = await ctx.app.inject({ url: '/api/v1/keys', headers: caller.headers });
    expect(list.body).not.toContain(plaintext);
    expect(list.json().data.keys.map((k: { id: string }) => k.id)).toEqual([key.id]);
  });

  it('authenticates with the key, records lastUsedAt, and takes precedence over a cookie', async () => {
    const owner = await signup(ctx.app);
    const other = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, owner);
    const response = await ctx.app.inject({
      url: '/api/v1/auth/session',
      headers: { ...key.headers, cookie: other.headers.cookie },
    });
    expect(response.json().data.principal).toMatchObject({
      kind: 'api_key',
      id: key.key.id,
      expiresAt: null,
    });
    expect(response.json().data.user.id).toBe(owner.userId);
    const list = await ctx.app.inject({ url: '/api/v1/keys', headers: key.headers });
    expect(list.json().data.keys[0].lastUsedAt).not.toBeNull();
  });

  it('a key cannot create or revoke keys: 403 session_required', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    const create = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: key.headers,
      payload: { name: 'x' },
    });
    const revoke = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: key.headers,
    });
    for (const response of [create, revoke])
      expect(errorOf(response)).toMatchObject({ status: 403, code: 'session_required' });
  });

  it('revocation is immediate and idempotent', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: key.headers })).statusCode).toBe(200);
    const first = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: caller.headers,
    });
    const second = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: caller.headers,
    });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(first.json().data.key.revokedAt).not.toBeNull();
    expect(second.json()).toEqual(first.json());
    const after = await ctx.app.inject({ url: '/api/v1/me', headers: key.headers });
    expect(errorOf(after)).toMatchObject({ status: 401, code: 'invalid_api_key' });
  });

  it('an expired key stops authenticating the moment expiresAt passes', async () => {
    const caller = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, caller, { name: 'short', expiresInDays: 1 });
    // A minute short of it, so a stalled machine between the key's creation and this read cannot pass it.
    ctx.clock.advance(86_400_000 - 60_000);
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: key.headers })).statusCode).toBe(200);
    ctx.clock.advance(60_000);
    expect(errorOf(await ctx.app.inject({ url: '/api/v1/me', headers: key.headers }))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
  });

  it.each(['Bearer svc_sk_short', 'Bearer nope', 'Basic abc', `Bearer svc_sk_${'A'.repeat(43)}`])(
    'answers the malformed or unknown credential %s with 401 invalid_api_key',
    async (authorization) => {
      const response = await ctx.app.inject({ url: '/api/v1/me', headers: { authorization } });
      expect(errorOf(response)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    },
  );

  it('allows 10 active keys, then 400 key_limit_reached; revoking frees a place', async () => {
    const caller = await signup(ctx.app);
    const ids: string[] = [];
    for (let i = 0; i < 10; i += 1) ids.push((await apiKeyOf(ctx.app, caller, { name: `k${i}` })).key.id);
    const over = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: caller.headers,
      payload: { name: 'k10' },
    });
    expect(errorOf(over)).toMatchObject({ status: 400, code: 'key_limit_reached' });
    await ctx.app.inject({ method: 'DELETE', url: `/api/v1/keys/${ids[0]}`, headers: caller.headers });
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: caller.headers,
          payload: { name: 'k10' },
        })
      ).statusCode,
    ).toBe(201);
  });

  it.each([
    { name: '' },
    { name: 'x', expiresInDays: 0 },
    { name: 'x', expiresInDays: 366 },
    { name: 'x', expiresInDays: 1.5 },
    {},
  ])('validates the body %j', async (payload) => {
    const caller = await signup(ctx.app);
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: caller.headers,
      payload,
    });
    expect(errorOf(response)).toMatchObject({ status: 400, code: 'validation_error' });
  });

  it("another account's key id is 404 not_found and stays active", async () => {
    const owner = await signup(ctx.app);
    const intruder = await signup(ctx.app);
    const key = await apiKeyOf(ctx.app, owner);
    const response = await ctx.app.inject({
      method: 'DELETE',
      url: `/api/v1/keys/${key.key.id}`,
      headers: intruder.headers,
    });
    expect(errorOf(response)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await ctx.app.inject({ url: '/api/v1/me', headers: key.headers })).statusCode).toBe(200);
  });
});
