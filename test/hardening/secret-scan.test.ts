/**
 * The log and storage scan: a real flow through the service with the logger at `trace` capturing every line (the
 * request log, the worker, failing requests, a database query forced to fail), then every secret the flow handled
 * is looked for in those lines and in the database as stored: the raw files of the embedded database's data
 * directory (tables, indexes, the write-ahead log, dead row versions), or on PostgreSQL every row of every table as
 * text. Planted values prove that the scan finds what is there.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { FastifyServerOptions } from 'fastify';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { rows } from '../../src/db/client.ts';
import type { Deps } from '../../src/deps.ts';
import { configuredSecrets, createRedactor, loggerOptions } from '../../src/http/logger.ts';
import type { App } from '../../src/http/types.ts';
import { deliverDueEmails } from '../../src/modules/notifications/notifications.service.ts';
import { closeDeps, createDeps } from '../../src/runtime.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { apiOf, successOf } from '../api.ts';
import { openTestDatabase, sessionCookieOf, waitForStatus } from '../harness.ts';
import { ManualClock } from '../support/clock.ts';
import { cookieOf } from '../support/cookies.ts';
import { totpCode } from '../support/totp.ts';
import { SoftwareAuthenticator } from '../support/webauthn.ts';
import { decodeWalletKeyNota, webCryptoDecrypt, webCryptoNota } from '../wallet-key-nota.ts';
import { RECIPIENT, UNLIMITED_ENV } from './fixture.ts';

// ---------------------------------------------------------------------------------------------------------
// The scanner

interface Secret {
  /** What it is, for the report: "password of A", "claim code of letter 1". */
  name: string;
  /** Every form it could be written in (a claim code with and without dashes, a key with and without 0x). */
  forms: string[];
  /** Stored by design (a password hash is how a password is kept): looked for in the log only. */
  logOnly?: boolean;
}

/** The secrets found in `haystack`, by name (a form shorter than 8 characters is never looked for). */
function secretsIn(haystack: Buffer, secrets: readonly Secret[]): string[] {
  const found: string[] = [];
  for (const secret of secrets) {
    const forms = secret.forms.filter((form) => form.length >= 8);
    if (forms.length === 0) throw new Error(`${secret.name} has no form long enough to look for`);
    if (forms.some((form) => haystack.includes(Buffer.from(form, 'utf8')))) found.push(secret.name);
  }
  return found;
}

/** Every file under `dir`, whole. */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  const out: Array<{ path: string; bytes: Buffer }> = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = statSync(path);
    if (stat.isDirectory()) out.push(...filesUnder(path));
    // The chain's IPC socket (`chain/anvil/anvil.ipc`) keeps nothing at rest, and reading one fails: only files hold bytes.
    else if (stat.isFile()) out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

/** The secrets found in any file under `dir`, each with the files it is in. */
function secretsInFiles(dir: string, secrets: readonly Secret[]): string[] {
  const found: string[] = [];
  for (const file of filesUnder(dir)) {
    for (const name of secretsIn(file.bytes, secrets))
      found.push(`${name} in ${file.path.slice(dir.length + 1)}`);
  }
  return found;
}

/** Every row of every table of a PostgreSQL database, as text (`row::text`), one per line. */
async function dumpRows(deps: Deps): Promise<Buffer> {
  const tables = await rows<{ schema: string; name: string }>(
    deps.database.db,
    sql`select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  const lines: string[] = [];
  for (const table of tables) {
    const dumped = await rows<{ row: string }>(
      deps.database.db,
      sql`select t::text as row from ${sql.identifier(table.schema)}.${sql.identifier(table.name)} t`,
    );
    lines.push(...dumped.map((entry) => `${table.schema}.${table.name}: ${entry.row}`));
  }
  return Buffer.from(lines.join('\n'), 'utf8');
}

describe('the scanner', () => {
  it('finds a secret in any of its forms, and only secrets that are there', () => {
    const code = 'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345';
    const secrets: Secret[] = [
      { name: 'claim code', forms: [code, code.replaceAll('-', '')] },
      { name: 'key', forms: ['svc_sk_abcdefghijklmnop'] },
    ];
    const line = Buffer.from(`{"level":30,"msg":"claimed ${code.replaceAll('-', '')}"}`);
    expect(secretsIn(line, secrets)).toEqual(['claim code']);
    expect(secretsIn(Buffer.from('{"msg":"[redacted]"}'), secrets)).toEqual([]);
    expect(() => secretsIn(line, [{ name: 'short', forms: ['1234'] }])).toThrow(/long enough/);
  });
});

// ---------------------------------------------------------------------------------------------------------
// The flow

const postgres = Boolean(process.env.DATABASE_URL);
const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-scan-'));
const lines: string[] = [];
const secrets: Secret[] = [];
/** Written on purpose, to prove the scans find what is there. */
const PLANTED = `planted-${randomBytes(8).toString('hex')}`;
let app: App;
const api = apiOf(() => app);
let deps: Deps;
let clock: ManualClock;
let stopWorker: (() => Promise<void>) | null = null;
let dropDatabase: () => Promise<void> = async () => {};
let storedRows: Buffer | null = null;

function remember(name: string, ...forms: string[]): void {
  secrets.push({ name, forms });
}

/** A session cookie's token, and the cookie as sent. */
function rememberSession(name: string, setCookie: string | string[] | undefined): Record<string, string> {
  const cookie = sessionCookieOf(setCookie);
  remember(`session token of ${name}`, cookie.slice('svc_session='.length));
  return { cookie };
}

async function signupAs(name: string, email: string, password: string): Promise<Record<string, string>> {
  remember(`password of ${name}`, password);
  const response = successOf(await api.post('/auth/signup', { body: { email, password, name } }));
  return rememberSession(name, response.headers['set-cookie']);
}

async function keyOf(name: string, session: Record<string, string>, label: string) {
  const response = successOf(await api.post('/keys', { body: { name: label }, headers: session }));
  const { plaintext, key } = response.json().data;
  remember(`API key ${label} of ${name}`, plaintext);
  return { headers: { authorization: `Bearer ${plaintext}` }, id: key.id as string };
}

async function letterWithMemo(session: Record<string, string>, walletId: string, memo: string) {
  remember(`memo "${memo}"`, memo);
  const response = successOf(
    await api.post('/transfer/letter', {
      body: {
        walletId,
        amount: '2',
        memo,
        recipient: RECIPIENT,
      },
      headers: session,
    }),
  );
  const letter = response.json().data.letter;
  remember(
    `claim code of the letter with memo "${memo}"`,
    letter.claimCode,
    letter.claimCode.replaceAll('-', ''),
  );
  return letter as { id: string; claimCode: string };
}

beforeAll(async () => {
  const database = postgres ? await openTestDatabase() : null;
  if (database) dropDatabase = database.drop;
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'trace', ...UNLIMITED_ENV });
  clock = new ManualClock();
  // Everything the service logs, through its own logger settings (redaction included), into `lines`.
  const capture = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  // What the chain and the database report before the app (and its logger) exists is printed as it comes.
  const early =
    (level: 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      if (app) (app.log[level] as (...a: unknown[]) => void)(...args);
      else lines.push(JSON.stringify(args));
    };
  const forward = { info: early('info'), warn: early('warn'), error: early('error') };
  deps = await createDeps(config, {
    network: true,
    clock,
    logger: forward as never,
    ...(database ? { database: database.database } : {}),
  });
  const options = loggerOptions('trace', createRedactor(configuredSecrets(config))) as Record<
    string,
    unknown
  >;
  app = await buildApp(deps, { logger: { ...options, stream: capture } as FastifyServerOptions['logger'] });
  await app.ready();
  stopWorker = await startWorker(deps, app.log);
  // The master key (generated into DATA_DIR/master.key on `local`) must never be logged.
  const masterKey = config.masterKey ?? readFileSync(join(dataDir, 'master.key'), 'utf8').trim();
  secrets.push({ name: 'master key', forms: [masterKey], logOnly: true });

  // Accounts, sessions, a failed login.
  let alice = await signupAs('Alice', 'alice-scan@example.com', 'Alice-Password-2718');
  const bob = await signupAs('Bob', 'bob-scan@example.com', 'Bob-Password-31415');
  remember('a wrong password', 'Wrong-Password-27182818');
  await api.post('/auth/login', {
    body: { email: 'alice-scan@example.com', password: 'Wrong-Password-27182818' },
  });
  const login = successOf(
    await api.post('/auth/login', {
      body: { email: 'alice-scan@example.com', password: 'Alice-Password-2718' },
    }),
  );
  alice = rememberSession('Alice (login)', login.headers['set-cookie']);
  // A body cut short with a password in it: invalid JSON, which must not be logged as it came.
  await api.raw('POST', '/auth/login', {
    headers: { 'content-type': 'application/json' },
    payload: '{"email":"alice-scan@example.com","password":"Alice-Password-2718"',
  });

  // TOTP: setup, enable, a two-step login.
  const setup = successOf(await api.post('/me/totp/setup', { headers: alice })).json().data;
  remember('TOTP secret of Alice', setup.secret, setup.otpauthUrl);
  const enabled = successOf(
    await api.post('/me/totp/enable', {
      body: { code: totpCode(setup.secret, clock.now()) },
      headers: alice,
    }),
  );
  const recoveryCodes = enabled.json().data.recoveryCodes as string[];
  for (const [i, code] of recoveryCodes.entries())
    remember(`recovery code ${i} of Alice`, code, code.replaceAll('-', ''));
  clock.advance(30_000);
  const first = successOf(
    await api.post('/auth/login', {
      body: { email: 'alice-scan@example.com', password: 'Alice-Password-2718' },
    }),
  );
  const pendingToken = first.json().data.pendingToken as string;
  remember('TOTP pending token of Alice', pendingToken);
  await api.post('/auth/login/totp', { body: { pendingToken: `${pendingToken}x`, code: '000000' } });
  const second = successOf(
    await api.post('/auth/login/totp', { body: { pendingToken, code: totpCode(setup.secret, clock.now()) } }),
  );
  alice = rememberSession('Alice (TOTP login)', second.headers['set-cookie']);
  // A login with a recovery code, and a second try with the same (spent) code.
  for (let attempt = 0; attempt < 2; attempt++) {
    const step = successOf(
      await api.post('/auth/login', {
        body: { email: 'alice-scan@example.com', password: 'Alice-Password-2718' },
      }),
    );
    const token = step.json().data.pendingToken as string;
    remember(`TOTP pending token of Alice (recovery ${attempt})`, token);
    const recovered = await api.post('/auth/login/totp', {
      body: { pendingToken: token, code: recoveryCodes[0] as string },
    });
    if (attempt === 0) rememberSession('Alice (recovery code login)', recovered.headers['set-cookie']);
  }

  // A passkey: registration, then a login with it.
  const authenticator = new SoftwareAuthenticator(config.publicOrigin);
  const creation = successOf(await api.post('/me/passkeys/options', { headers: alice }));
  const challenge = cookieOf(creation.headers['set-cookie'], 'svc_webauthn') as string;
  successOf(
    await api.post('/me/passkeys/register', {
      body: {
        credential: authenticator.register(creation.json().data.options),
        deviceName: 'Scanner laptop',
      },
      headers: { cookie: `${alice.cookie}; ${challenge}` },
    }),
  );
  const assertion = successOf(await api.post('/auth/passkey/options', { body: {} }));
  const passkeyLogin = successOf(
    await api.post('/auth/passkey/login', {
      body: { credential: authenticator.assert(assertion.json().data.options) },
      headers: { cookie: cookieOf(assertion.headers['set-cookie'], 'svc_webauthn') as string },
    }),
  );
  rememberSession('Alice (passkey login)', passkeyLogin.headers['set-cookie']);

  // API keys: create, use, revoke, use after revocation.
  const revoked = await keyOf('Alice', alice, 'revoked');
  successOf(await api.get('/me', { headers: revoked.headers }));
  successOf(await api.delete('/keys/{id}', { params: { id: revoked.id }, headers: alice }));
  await api.get('/me', { headers: revoked.headers });
  // Webhook signing secrets: at creation and at rotation (both sign for a while, both are sealed at rest).
  const webhook = successOf(
    await api.post('/webhooks', { body: { url: 'https://hooks.example.com/in' }, headers: alice }),
  ).json().data;
  remember('webhook secret of Alice', webhook.secret);
  const rotated = successOf(
    await api.post('/webhooks/{id}/rotate-secret', { params: { id: webhook.endpoint.id }, headers: alice }),
  );
  remember('rotated webhook secret of Alice', rotated.json().data.secret);
  const key = await keyOf('Alice', alice, 'working');
  await api.get('/me', { headers: { cookie: 'svc_session=not-a-session' } });

  // Wallets: create, export, import a key made outside.
  const wallet = successOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: key.headers }),
  ).json().data.wallet;
  const bobWallet = successOf(
    await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers: bob }),
  ).json().data.wallet;
  remember('export passphrase', 'export passphrase 1618033');
  const exported = successOf(
    await api.post('/wallets/{id}/export', {
      params: { id: wallet.id },
      body: {
        passphrase: 'export passphrase 1618033',
      },
      headers: alice,
    }),
  );
  const exportedKey = await webCryptoDecrypt(
    decodeWalletKeyNota(exported.json().data.nota),
    'export passphrase 1618033',
  );
  remember('custodial key of the wallet', exportedKey.slice(2), exportedKey);
  const outside = generatePrivateKey();
  remember('custodial key imported', outside.slice(2), outside);
  remember('import passphrase', 'import passphrase 1414213');
  remember('a wrong import passphrase', 'wrong import passphrase 2236067');
  await api.post('/wallets/import', {
    body: {
      nota: await webCryptoNota(generatePrivateKey(), 'import passphrase 1414213'),
      passphrase: 'wrong import passphrase 2236067',
    },
    headers: alice,
  });
  await api.post('/wallets/{id}/export', {
    params: { id: wallet.id },
    body: {
      passphrase: 'export passphrase 1618033',
    },
    headers: key.headers,
  });
  successOf(
    await api.post('/wallets/import', {
      body: {
        nota: await webCryptoNota(outside, 'import passphrase 1414213'),
        passphrase: 'import passphrase 1414213',
        label: 'Imported',
      },
      headers: alice,
    }),
  );

  // Money: fund, mint, a confidential transfer.
  const fund = successOf(
    await api.post('/fund', { body: { walletId: wallet.id, amount: '100' }, headers: key.headers }),
  );
  await waitForStatus(app, key.headers, fund.json().data.transaction.id, ['CONFIRMED']);
  const mint = successOf(
    await api.post('/mint', { body: { walletId: wallet.id, amount: '50' }, headers: key.headers }),
  );
  await waitForStatus(app, key.headers, mint.json().data.transaction.id, ['CONFIRMED']);
  const transfer = successOf(
    await api.post('/transfer', {
      body: {
        walletId: wallet.id,
        to: bobWallet.address,
        amount: '1',
      },
      headers: key.headers,
    }),
  );
  await waitForStatus(app, key.headers, transfer.json().data.transaction.id, ['CONFIRMED']);

  // Letters: one claimed (its PDF fetched, previewed with its code in the query), one voided.
  const claimed = await letterWithMemo(key.headers, wallet.id, 'memo for the engines 5772156');
  successOf(await api.get('/transfer/letter/{id}/pdf', { params: { id: claimed.id }, headers: key.headers }));
  successOf(await api.get('/transfer/letter/preview', { query: { code: claimed.claimCode } }));
  await api.post('/transfer/letter/claim', {
    body: {
      claimCode: 'ABCD-EFGH-JKMN-PQRS-TVWX-YZ01-2345',
      walletId: bobWallet.id,
    },
    headers: bob,
  });
  await api.post('/transfer/letter/claim', {
    body: {
      claimCode: claimed.claimCode,
      walletId: wallet.id,
    },
    headers: key.headers,
  });
  successOf(
    await api.post('/transfer/letter/claim', {
      body: { claimCode: claimed.claimCode, walletId: bobWallet.id },
      headers: bob,
    }),
  );
  const voided = await letterWithMemo(key.headers, wallet.id, 'memo of a voided letter 6931471');
  successOf(
    await api.post('/transfer/letter/{id}/void', {
      params: { id: voided.id },
      body: {},
      headers: key.headers,
    }),
  );

  // A password change (the old one is remembered above).
  remember('new password of Alice', 'Alice-Password-New-1729');
  successOf(
    await api.post('/me/password', {
      body: {
        currentPassword: 'Alice-Password-2718',
        newPassword: 'Alice-Password-New-1729',
      },
      headers: alice,
    }),
  );

  // Database queries forced to fail with secrets among their parameters: a sealed memo and claim code, a hash.
  await deps.database.db.execute(sql`create function scan_refuse() returns trigger language plpgsql as
    $$ begin raise exception 'refused by the scan test'; end $$`);
  await deps.database.db.execute(sql`create trigger scan_refuse_letters before insert on letters
    for each row execute function scan_refuse()`);
  await deps.database.db.execute(sql`create trigger scan_refuse_users before insert on users
    for each row execute function scan_refuse()`);
  remember('memo "memo of a letter never stored 1202056"', 'memo of a letter never stored 1202056');
  const failedLetter = await api.post('/transfer/letter', {
    body: {
      walletId: wallet.id,
      amount: '2',
      memo: 'memo of a letter never stored 1202056',
      recipient: RECIPIENT,
    },
    headers: key.headers,
  });
  expect(failedLetter.statusCode).toBe(500);
  remember('password of a signup that failed', 'Carol-Password-1123581');
  const failedSignup = await api.post('/auth/signup', {
    body: { email: 'carol-scan@example.com', password: 'Carol-Password-1123581' },
  });
  expect(failedSignup.statusCode).toBe(500);
  await deps.database.db.execute(sql`drop trigger scan_refuse_letters on letters`);
  await deps.database.db.execute(sql`drop trigger scan_refuse_users on users`);

  // A password reset by email: the link's token through the outbox and the local mailbox, a wrong token, the reset.
  const carol = await signupAs('Carol', 'carol-scan@example.com', 'Carol-Password-1414');
  successOf(await api.post('/auth/password/forgot', { body: { email: 'carol-scan@example.com' } }));
  await deliverDueEmails(deps, app.log);
  const mailbox = successOf(await api.get('/sandbox/mailbox', { query: { to: 'carol-scan@example.com' } }));
  const resetMail = (mailbox.json().data.messages as Array<{ text: string }>).find((m) =>
    m.text.includes('token='),
  );
  const resetToken = decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(resetMail?.text ?? '')?.[1] ?? '');
  expect(resetToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  remember('password reset token of Carol', resetToken);
  remember('new password of Carol', 'Carol-New-Password-1732');
  await api.post('/auth/password/reset', {
    body: { token: `${resetToken}x`, newPassword: 'Carol-New-Password-1732' },
  });
  successOf(
    await api.post('/auth/password/reset', {
      body: { token: resetToken, newPassword: 'Carol-New-Password-1732' },
    }),
  );
  await api.get('/me', { headers: carol });
  await deliverDueEmails(deps, app.log);

  // The positive controls: a value stored in clear on purpose, and one logged on purpose.
  successOf(await api.patch('/me', { body: { company: PLANTED }, headers: key.headers }));
  app.log.info({ note: PLANTED }, 'planted by the scan test');

  // Password hashes: stored by design, never to be logged.
  const hashes = await rows<{ email: string; password_hash: string }>(
    deps.database.db,
    sql`select email, password_hash from users`,
  );
  for (const row of hashes)
    secrets.push({ name: `password hash of ${row.email}`, forms: [row.password_hash], logOnly: true });

  await stopWorker();
  stopWorker = null;
  if (postgres) storedRows = await dumpRows(deps);
  await app.close();
  // Closing writes everything the embedded database holds to its files.
  await closeDeps(deps);
}, 240_000);
afterAll(async () => {
  await stopWorker?.();
  await dropDatabase();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('after a full flow', () => {
  it('logged the flow: requests, the failed queries, the planted line', () => {
    const log = lines.join('\n');
    expect(lines.length).toBeGreaterThan(80);
    expect(log).toContain('/api/v1/transfer/letter/claim');
    expect(log).toMatch(/refused by the scan test/);
    expect(secretsIn(Buffer.from(log), [{ name: 'planted', forms: [PLANTED] }])).toEqual(['planted']);
  });

  it('logged no secret: password, hash, API key, session token, TOTP secret, claim code, private key, passphrase, memo', () => {
    const found: string[] = [];
    for (const line of lines) {
      for (const name of secretsIn(Buffer.from(line), secrets)) found.push(`${name}: ${line.slice(0, 300)}`);
    }
    expect(secrets.length).toBeGreaterThan(20);
    expect(found).toEqual([]);
  });

  it('stored no secret in clear in the database', () => {
    const stored = secrets.filter((secret) => !secret.logOnly);
    const planted: Secret = { name: 'planted', forms: [PLANTED] };
    if (storedRows) {
      expect(secretsIn(storedRows, [planted])).toEqual(['planted']);
      expect(secretsIn(storedRows, stored)).toEqual([]);
    } else {
      const pgdata = join(dataDir, 'pgdata');
      expect(secretsInFiles(pgdata, [planted]).length).toBeGreaterThan(0);
      expect(secretsInFiles(pgdata, stored)).toEqual([]);
    }
  });

  it('left no secret anywhere else in the data directory (the chain journal and state)', () => {
    const keyFiles = new Set([join(dataDir, 'master.key'), join(dataDir, 'chain', 'operator.key')]);
    const stored = secrets.filter((secret) => !secret.logOnly);
    const found: string[] = [];
    // The local mailbox stands for the account holders' inboxes: it holds what was emailed to them (the reset link).
    const mailbox = join(dataDir, 'mailbox');
    expect(filesUnder(mailbox).length).toBeGreaterThan(0);
    for (const file of filesUnder(dataDir)) {
      if (
        file.path.startsWith(join(dataDir, 'pgdata')) ||
        file.path.startsWith(mailbox) ||
        keyFiles.has(file.path)
      )
        continue;
      for (const name of secretsIn(file.bytes, stored))
        found.push(`${name} in ${file.path.slice(dataDir.length + 1)}`);
    }
    expect(filesUnder(dataDir).some((file) => file.path.endsWith('journal.jsonl'))).toBe(true);
    expect(found).toEqual([]);
  });
});
