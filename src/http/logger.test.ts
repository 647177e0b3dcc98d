import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions, redactSecrets } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const options = loggerOptions('info') as pino.LoggerOptions;
  return { logger: pino(options, stream), lines };
}

describe('log redaction', () => {
  it('censors every secret field at any depth and keeps the rest', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        password: 'hunter2-Password',
        body: {
          claimCode: 'ABCD-EFGH',
          walletId: 'w1',
          nested: { passphrase: 'long passphrase', privateKey: '0xdeadbeef' },
        },
        headers: {
          authorization: 'Bearer svc_sk_secret',
          cookie: 'svc_session=abc',
          'x-sweep-secret': 's3cret',
        },
        list: [{ token: 'tok' }, { otpauthUrl: 'otpauth://totp/x?secret=ABC' }],
      },
      'a request',
    );
    const line = lines.join('');
    for (const secret of [
      'hunter2',
      'ABCD-EFGH',
      'long passphrase',
      '0xdeadbeef',
      'svc_sk_secret',
      'svc_session=abc',
      's3cret',
      'tok"',
      'otpauth://',
    ]) {
      expect(line).not.toContain(secret);
    }
    expect(line).toContain('"walletId":"w1"');
    expect(line).toContain('[redacted]');
  });

  it('keeps errors whole for their serializer, and does not change the object it was given', () => {
    const error = new Error('boom');
    expect((redactSecrets({ err: error }) as { err: unknown }).err).toBe(error);
    const original = { code: '123456' };
    redactSecrets(original);
    expect(original.code).toBe('123456');
  });
});

describe('request logging of the real app', () => {
  it('logs requests by path through the serializers, without credentials or query strings', async () => {
    const { Writable } = await import('node:stream');
    const { buildApp } = await import('../app.ts');
    const { createTestContext } = await import('../../test/harness.ts');
    const ctx = await createTestContext();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = await buildApp(ctx.deps, { logger: { ...(loggerOptions('info') as object), stream } });
    try {
      const response = await app.inject({
        url: '/api/v1/me?code=ABCD-EFGH',
        headers: { authorization: 'Bearer svc_sk_not-a-real-key', cookie: 'svc_session=abc' },
      });
      expect(response.statusCode).toBe(401);
      const log = lines.join('');
      expect(log).toContain('"path":"/api/v1/me"');
      expect(log).toContain('"statusCode":401');
      for (const secret of ['svc_sk_not-a-real-key', 'svc_session=abc', 'ABCD-EFGH'])
        expect(log).not.toContain(secret);
    } finally {
      await app.close();
      await ctx.close();
    }
  });
});
