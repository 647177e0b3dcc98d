import { mkdtempSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, errorOf, signup } from '../../../test/harness.ts';
import { emailOutbox } from '../../db/schema/index.ts';
import { deliverDueEmails, MAX_EMAIL_ATTEMPTS } from '../../modules/notifications/notifications.service.ts';
import { createEmailSender, createLocalMailbox, createSmtpSender, isLocalMailbox } from './index.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
  user: string | undefined;
}

/** A local SMTP server (the `smtp-server` package) that keeps what it receives; AUTH PLAIN/LOGIN over plain text. */
async function startSmtp(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'mailer' && auth.password === 'smtp-secret-pw')
        callback(null, { user: auth.username });
      else callback(new Error('bad credentials'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: session.user as string | undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://mailer:smtp-secret-pw@127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let smtp: Awaited<ReturnType<typeof startSmtp>>;
beforeAll(async () => {
  smtp = await startSmtp();
});
afterAll(() => smtp.close());

describe('the SMTP sender (nodemailer against a local smtp-server)', () => {
  it('sends the message with authentication: envelope, subject, text and HTML parts, Message-ID from the id', async () => {
    const sender = createSmtpSender({ url: smtp.url, from: 'sealpay <no-reply@example.com>' });
    await sender.send({
      id: 'abc123',
      to: 'ada@example.com',
      subject: 'Reset your sealpay password',
      text: 'Open this link: https://example.com/#/reset-password?token=t',
      html: '<p>Open this link</p>',
    });
    await sender.close();
    const message = smtp.received.at(-1);
    expect(message).toMatchObject({ from: 'no-reply@example.com', to: ['ada@example.com'], user: 'mailer' });
    expect(message?.raw).toContain('Subject: Reset your sealpay password');
    expect(message?.raw).toMatch(/Message-ID: <abc123@127\.0\.0\.1>/i);
    expect(message?.raw).toContain('text/plain');
    expect(message?.raw).toContain('text/html');
  });

  it('fails (so the outbox retries) when the server refuses the credentials', async () => {
    const sender = createSmtpSender({
      url: smtp.url.replace('smtp-secret-pw', 'wrong'),
      from: 'x@example.com',
    });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow();
    await sender.close();
  });

  it('is the sender of a service with SMTP_URL: the outbox goes out over SMTP, and the mailbox route is 404', async () => {
    const ctx = await createTestContext({
      env: { SMTP_URL: smtp.url, EMAIL_FROM: 'Sealpay <mail@sealpay.test>' },
    });
    try {
      expect(ctx.deps.email?.kind).toBe('smtp');
      const caller = await signup(ctx.app);
      const before = smtp.received.length;
      const forgot = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password/forgot',
        payload: { email: caller.email },
      });
      expect(forgot.statusCode).toBe(202);
      expect(await deliverDueEmails(ctx.deps, { info() {}, warn() {}, error() {} })).toBe(1);
      const message = smtp.received[before];
      expect(message?.to).toEqual([caller.email.toLowerCase()]);
      expect(message?.from).toBe('mail@sealpay.test');
      expect(message?.raw).toContain('reset-password?token=');
      const mailbox = await ctx.app.inject({ url: '/api/v1/sandbox/mailbox' });
      expect(errorOf(mailbox)).toMatchObject({ status: 404, code: 'not_found' });
    } finally {
      await ctx.close();
    }
  });
});

describe('choosing the sender', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-email-'));
  const from = 'sealpay <no-reply@localhost>';
  it('SMTP when SMTP_URL is set, the local mailbox on local and devnet, none on sepolia and mainnet', () => {
    expect(createEmailSender({ network: 'mainnet', smtpUrl: smtp.url, from, dataDir })?.kind).toBe('smtp');
    expect(createEmailSender({ network: 'local', smtpUrl: null, from, dataDir })?.kind).toBe('mailbox');
    expect(createEmailSender({ network: 'devnet', smtpUrl: ' ', from, dataDir })?.kind).toBe('mailbox');
    expect(createEmailSender({ network: 'sepolia', smtpUrl: null, from, dataDir })).toBeNull();
    expect(createEmailSender({ network: 'mainnet', smtpUrl: null, from, dataDir })).toBeNull();
  });

  it('the local mailbox keeps each message as a 0600 file under DATA_DIR/mailbox, once per id, newest first', async () => {
    let now = new Date('2026-01-01T00:00:00.000Z');
    const mailbox = createLocalMailbox({ dataDir, from, now: () => now });
    await mailbox.send({ id: 'm1', to: 'Ada@Example.com', subject: 'first', text: 'one' });
    now = new Date('2026-01-01T00:00:01.000Z');
    await mailbox.send({
      id: 'm2',
      to: 'bob@example.com',
      subject: 'second',
      text: 'two',
      html: '<p>two</p>',
    });
    await mailbox.send({
      id: 'm2',
      to: 'bob@example.com',
      subject: 'second',
      text: 'two',
      html: '<p>two</p>',
    });
    const files = (await readdir(join(dataDir, 'mailbox'))).sort();
    expect(files).toEqual(['m1.json', 'm2.json']);
    expect((await stat(join(dataDir, 'mailbox', 'm1.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(dataDir, 'mailbox', 'm1.json'), 'utf8'))).toMatchObject({
      from,
      text: 'one',
    });
    expect((await mailbox.list()).map((m) => m.subject)).toEqual(['second', 'first']);
    expect((await mailbox.list({ to: 'ada@example.com' })).map((m) => m.id)).toEqual(['m1']);
    expect(isLocalMailbox(mailbox)).toBe(true);
  });
});

describe('the outbox', () => {
  it('keeps an email the sender refused and sends it on a later attempt; gives up after repeated failures', async () => {
    const ctx = await createTestContext();
    try {
      const caller = await signup(ctx.app);
      const real = ctx.deps.email;
      let failing = true;
      const flaky = {
        kind: 'mailbox' as const,
        async send(message: Parameters<NonNullable<typeof real>['send']>[0]) {
          if (failing) throw new Error('connection refused');
          await real?.send(message);
        },
        close: async () => {},
        list: async () => [],
      };
      Object.assign(ctx.deps, { email: flaky });
      const warnings: string[] = [];
      const log = { info() {}, error() {}, warn: (_o: object, m?: string) => warnings.push(m ?? '') };
      await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password/forgot',
        payload: { email: caller.email },
      });
      expect(await deliverDueEmails(ctx.deps, log)).toBe(0);
      expect(warnings).toEqual(['email not sent; will retry']);
      const [row] = await ctx.deps.database.db.select().from(emailOutbox);
      expect(row).toMatchObject({ attempts: 1, sentAt: null, lastError: 'connection refused' });
      expect(row?.messageSealed).toMatch(/^v1\./);
      // Not due yet: the backoff holds it.
      expect(await deliverDueEmails(ctx.deps, log)).toBe(0);
      expect(warnings).toHaveLength(1);
      ctx.clock.advance(60_000);
      failing = false;
      expect(await deliverDueEmails(ctx.deps, log)).toBe(1);
      const [sent] = await ctx.deps.database.db.select().from(emailOutbox);
      expect(sent).toMatchObject({ attempts: 2, messageSealed: null });
      expect(sent?.sentAt).not.toBeNull();

      failing = true;
      await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password/forgot',
        payload: { email: caller.email },
      });
      for (let i = 0; i < MAX_EMAIL_ATTEMPTS; i++) {
        await deliverDueEmails(ctx.deps, log);
        ctx.clock.advance(2 * 3_600_000);
      }
      expect(warnings.at(-1)).toBe('email dropped after repeated failures');
      const rows = await ctx.deps.database.db.select().from(emailOutbox);
      expect(rows.find((r) => r.sentAt === null)).toMatchObject({
        messageSealed: null,
        attempts: MAX_EMAIL_ATTEMPTS,
      });
      Object.assign(ctx.deps, { email: real });
    } finally {
      await ctx.close();
    }
  });

  it('a worker that died mid-send leaves a lease; the email goes out once it runs out', async () => {
    const ctx = await createTestContext();
    try {
      const caller = await signup(ctx.app);
      await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password/forgot',
        payload: { email: caller.email },
      });
      const quiet = { info() {}, warn() {}, error() {} };
      // The dead worker: it leased the row (attempts 1) and never recorded a result.
      const { leaseDueEmails } = await import('../../modules/notifications/notifications.repository.ts');
      const now = ctx.clock.now();
      expect(
        await leaseDueEmails(ctx.deps.database.db, now, new Date(now.getTime() + 60_000), 10),
      ).toHaveLength(1);
      expect(await deliverDueEmails(ctx.deps, quiet)).toBe(0);
      ctx.clock.advance(60_001);
      expect(await deliverDueEmails(ctx.deps, quiet)).toBe(1);
      const mailbox = await ctx.app.inject({
        url: `/api/v1/sandbox/mailbox?to=${encodeURIComponent(caller.email)}`,
      });
      expect(mailbox.json().data.messages).toHaveLength(1);
    } finally {
      await ctx.close();
    }
  });

  it('the mailbox route is 404 in production-shaped deployments without a local mailbox', async () => {
    const ctx = await createTestContext({
      env: { NETWORK: 'sepolia', MASTER_KEY: 'a'.repeat(64), RPC_URL: 'http://127.0.0.1:1' },
    });
    try {
      expect(ctx.deps.email).toBeNull();
      expect(errorOf(await ctx.app.inject({ url: '/api/v1/sandbox/mailbox' }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
      const caller = await signup(ctx.app);
      const forgot = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password/forgot',
        payload: { email: caller.email },
      });
      expect(forgot.statusCode).toBe(202);
      expect(await ctx.deps.database.db.select().from(emailOutbox)).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
