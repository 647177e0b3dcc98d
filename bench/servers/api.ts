/**
 * The service's HTTP app without the chain (`buildApp` over `createDeps(config, {network: false})`), on a fresh
 * embedded database, with one account and one API key: what `GET /api/v1/auth/session` is measured against.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { closeDeps, createDeps } from '../../src/runtime.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-bench-auth-'));
const config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  RATE_LIMIT_READS_PER_MINUTE: process.env.RATE_LIMIT_READS_PER_MINUTE ?? '100000000',
});
const deps = await createDeps(config, { network: false });
const app = await buildApp(deps);
await app.ready();
const signup = await app.inject({
  method: 'POST',
  url: '/api/v1/auth/signup',
  payload: { email: 'bench@example.com', password: 'Correct-Horse-9', name: 'Bench' },
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
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(
  `${JSON.stringify({
    port: typeof address === 'object' && address ? address.port : 0,
    authorization: `Bearer ${key.json().data.plaintext}`,
    database: deps.database.kind,
    readsPerMinute: config.rateLimits.readsPerMinute,
  })}\n`,
);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => closeDeps(deps))
    .then(() => process.exit(0));
});
