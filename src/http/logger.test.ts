import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { configuredSecrets, createRedactor, loggerOptions } from './logger.ts';

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

  it('keeps error codes readable and does not change the object it was given', () => {
    const { logger, lines } = capture();
    const original = { code: 'insufficient_balance', error: { code: 'not_found' } };
    logger.warn(original, 'refused');
    expect(lines.join('')).toContain('"code":"insufficient_balance"');
    expect(lines.join('')).toContain('"code":"not_found"');
    expect(original.code).toBe('insufficient_balance');
  });

  it('censors secrets by their shape inside any string, whatever the field is called', () => {
    const redactor = createRedactor();
    const secrets = [
      'svc_sk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfG',
      '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo',
      'v1.0123456789ab.aXZpdml2aXY.Y2lwaGVydGV4dA',
      '7K3M-9QWE-RTY4-ZXCV-B6NM-ASDF-GH2J',
      '7K3M9QWERTY4ZXCVB6NMASDFGH2J',
      'otpauth://totp/sealpay:me?secret=JBSWY3DPEHPK3PXP',
    ];
    const logged = JSON.stringify(
      redactor.object({ note: `first ${secrets[0]} then ${secrets[1]}`, list: secrets.slice(2) }),
    );
    for (const secret of secrets) expect(logged).not.toContain(secret);
    expect(logged).toContain('first [redacted] then [redacted]');
  });

  it('censors configured secret values (provider keys, the RPC URL, the database password)', () => {
    const redactor = createRedactor(
      configuredSecrets({
        masterKey: 'a'.repeat(64),
        sweepSecret: null,
        zamaApiKey: 'zama-key-0123456789',
        lobApiKey: null,
        operatorPrivateKey: null,
        rpcUrl: 'https://rpc.example/v3/project-key-123456, https://backup.example/key/other-key-654321',
        databaseUrl: 'postgres://app:db-pass-987654@db/sealpay',
      }),
    );
    const logged = redactor.text(
      'fetch https://rpc.example/v3/project-key-123456 failed; then https://backup.example/key/other-key-654321; ' +
        'zama-key-0123456789; password db-pass-987654',
    );
    expect(logged).not.toMatch(/project-key|other-key|zama-key|db-pass/);
  });

  it('logs a failed query without its parameter values, through the cause chain', async () => {
    const { logger, lines } = capture();
    const { DrizzleQueryError } = await import('drizzle-orm/errors');
    const driverError = Object.assign(
      new Error('duplicate key value violates unique constraint "users_email"'),
      {
        code: '23505',
        constraint: 'users_email',
        detail: 'Key (email)=(alice@example.com) already exists.',
      },
    );
    const hash = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo';
    const error = new DrizzleQueryError(
      'insert into users (email, password_hash, memo) values ($1, $2, $3)',
      ['alice@example.com', hash, 'a memo in clear'],
      driverError,
    );
    logger.error({ err: new Error('request failed', { cause: error }) }, 'unhandled error');
    logger.error(error);
    const log = lines.join('');
    expect(log).toContain('insert into users');
    expect(log).toContain('"code":"23505"');
    expect(log).toContain('users_email');
    for (const value of ['alice@example.com', hash, 'a memo in clear', 'c2FsdHNhbHQ']) {
      expect(log).not.toContain(value);
    }
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
