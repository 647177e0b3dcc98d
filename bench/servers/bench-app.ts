/** What the benchmark servers share: the app without the chain, its accounts, and how a server says it is up. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import { closeDeps, createDeps } from '../../src/runtime.ts';

/**
 * `buildApp` over `createDeps(config, {network: false})` on a fresh data directory: embedded PGlite, or
 * PostgreSQL when DATABASE_URL is set. LOG_LEVEL warn and an unlimited read budget unless the environment says.
 */
export async function openBenchApp(prefix: string) {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: mkdtempSync(join(tmpdir(), prefix)),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    RATE_LIMIT_READS_PER_MINUTE: process.env.RATE_LIMIT_READS_PER_MINUTE ?? '100000000',
  });
  const deps = await createDeps(config, { network: false });
  const app = await buildApp(deps);
  await app.ready();
  return { app, deps, config };
}

/** Listens on a free port, prints `{port, database, …info}` as one JSON line, and stops on SIGTERM. */
export async function announce(app: App, deps: Deps, info: Record<string, unknown>) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  process.stdout.write(
    `${JSON.stringify({
      port: typeof address === 'object' && address ? address.port : 0,
      database: deps.database.kind,
      ...info,
    })}\n`,
  );
  process.on('SIGTERM', () => {
    void app
      .close()
      .then(() => closeDeps(deps))
      .then(() => process.exit(0));
  });
}

/** An account with an API key, made through the app itself. */
export async function benchAccount(app: App, name: string) {
  const signup = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email: `${name}@example.com`, password: 'Correct-Horse-9', name },
  });
  const cookie = ([] as string[])
    .concat(signup.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('svc_session='))
    ?.split(';')[0];
  if (signup.statusCode !== 201 || !cookie)
    throw new Error(`signup failed: ${signup.statusCode} ${signup.body}`);
  const key = await app.inject({
    method: 'POST',
    url: '/api/v1/keys',
    headers: { cookie },
    payload: { name: 'bench' },
  });
  if (key.statusCode !== 201) throw new Error(`key creation failed: ${key.statusCode} ${key.body}`);
  return {
    userId: signup.json().data.user.id as string,
    authorization: `Bearer ${key.json().data.plaintext}`,
  };
}
