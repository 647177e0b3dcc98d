/**
 * The service's HTTP app without the chain (`buildApp` over `createDeps(config, {network: false})`), on a fresh
 * embedded database, with one account and one API key: what `GET /api/v1/auth/session` is measured against.
 */
import { announce, benchAccount, openBenchApp } from './bench-app.ts';

const { app, deps, config } = await openBenchApp('sealpay-bench-auth-');
const account = await benchAccount(app, 'bench');
await announce(app, deps, {
  authorization: account.authorization,
  readsPerMinute: config.rateLimits.readsPerMinute,
});
