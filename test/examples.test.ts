/**
 * The examples of `examples/` as an integrator runs them: each a plain `node` process (type stripping, no build)
 * against the service over real HTTP, started the way every test starts it (the embedded chain and the worker).
 * With no `SEALPAY_API_KEY`, each example signs up its own demo accounts, as it would on a fresh `npm start`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../scripts/build.ts';
import { createTestContext, listenOnLoopback, type TestContext } from './harness.ts';

const run = promisify(execFile);

let ctx: TestContext;
let origin: string;

async function example(name: string): Promise<string> {
  const { stdout } = await run(process.execPath, [path.join(PROJECT_ROOT, 'examples', name)], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', SEALPAY_URL: origin },
    timeout: 150_000,
  });
  return stdout;
}

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  origin = await listenOnLoopback(ctx.app);
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

describe('examples/', () => {
  it('pay-confidentially.ts pays an address in cSTABLE', async () => {
    const output = await example('pay-confidentially.ts');
    expect(output).toMatch(/transfer \w+ CONFIRMED: 12\.50 cSTABLE to 0x[0-9a-fA-F]{40}/);
    expect(output).toMatch(/confidential balance of 0x[0-9a-fA-F]{40}: 12\.50 cSTABLE/);
  }, 160_000);

  it('send-and-claim-letter.ts sends a letter that another account claims', async () => {
    const output = await example('send-and-claim-letter.ts');
    expect(output).toMatch(/letter \w+ ESCROWED; claim code [0-9A-Z]{4}(-[0-9A-Z]{4}){6}/);
    expect(output).toMatch(/letter CLAIMED: 7\.25 cSTABLE \("Happy birthday!"\) into 0x/);
  }, 160_000);

  it('verify-receipt-offline.ts verifies a receipt with the public keys alone, and refuses a forged one', async () => {
    const output = await example('verify-receipt-offline.ts');
    expect(output).toMatch(/receipt of FUND \w+: signature valid/);
    expect(output).toMatch(/amount changed: signature INVALID/);
  }, 160_000);
});
