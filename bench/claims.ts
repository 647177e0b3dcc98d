/**
 * Part f: claims under load. One sender escrows 20 letters through the API (`node src/main.ts start`, embedded
 * network), then 20 claimants, each with a wallet of their own, claim one letter each, all at once: each
 * `POST /transfer/letter/claim` blocks until the release is confirmed, so its latency is the claim as a
 * claimant sees it. Target: p99 ≤ 2 s.
 */
import {
  type Client,
  createWallet,
  freshDataDir,
  LOAD_ENV,
  request,
  type ServiceProcess,
  signupWithKey,
  spawnService,
  stopGracefully,
  waitReady,
  waitTerminal,
} from '../test/faults/service.ts';
import { percentile } from './transfers.ts';

export const LETTERS = 20;

export interface ClaimsResult {
  letters: number;
  claimed: number;
  wallMs: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  target: number;
  notes: string[];
}

const RECIPIENT = {
  name: 'Bench Recipient',
  address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal: '62701', country: 'US' },
};

async function post(service: ServiceProcess, client: Client, path: string, body: unknown, status = 201) {
  const response = await request(service.baseUrl, 'POST', `/api/v1${path}`, {
    headers: client.headers,
    body,
  });
  if (response.status !== status)
    throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function runClaimsBench(): Promise<ClaimsResult> {
  const service = await spawnService({
    dataDir: freshDataDir(),
    env: { ...LOAD_ENV, RATE_LIMIT_CLAIMS_PER_15_MINUTES: '100000' },
  });
  try {
    await waitReady(service);
    const sender = await signupWithKey(service.baseUrl);
    const wallet = await createWallet(service.baseUrl, sender);
    for (const path of ['/fund', '/mint']) {
      const { transaction } = await post(service, sender, path, { walletId: wallet.id, amount: '100' });
      if ((await waitTerminal(service.baseUrl, sender, transaction.id)).status !== 'CONFIRMED') {
        throw new Error(`${path} did not confirm`);
      }
    }
    const codes: string[] = [];
    for (let i = 0; i < LETTERS; i++) {
      const { letter } = await post(service, sender, '/transfer/letter', {
        walletId: wallet.id,
        amount: '1',
        recipient: RECIPIENT,
      });
      codes.push(letter.claimCode as string);
    }
    const claimants = await Promise.all(
      codes.map(async () => {
        const client = await signupWithKey(service.baseUrl);
        return { client, wallet: await createWallet(service.baseUrl, client) };
      }),
    );
    const latencies: number[] = [];
    let claimed = 0;
    const t0 = performance.now();
    await Promise.all(
      claimants.map(async ({ client, wallet: own }, i) => {
        const begun = performance.now();
        const { letter } = await post(
          service,
          client,
          '/transfer/letter/claim',
          { claimCode: codes[i], walletId: own.id },
          200,
        );
        latencies.push(performance.now() - begun);
        if (letter.status === 'CLAIMED') claimed += 1;
      }),
    );
    const wallMs = performance.now() - t0;
    return {
      letters: LETTERS,
      claimed,
      wallMs: Math.round(wallMs),
      medianMs: Math.round(percentile(latencies, 50)),
      p99Ms: Math.round(percentile(latencies, 99)),
      maxMs: Math.round(Math.max(...latencies)),
      target: 2000,
      notes: [
        `node src/main.ts start on a fresh DATA_DIR (embedded network, PGlite); one sender escrows ${LETTERS} letters of 1 cSTABLE one after another (not measured)`,
        `${LETTERS} claimants, each with a custodial wallet, POST /transfer/letter/claim at once; latency = request sent → 200 (the release confirmed); p99 of ${LETTERS} is the slowest`,
        'RATE_LIMIT_CLAIMS_PER_15_MINUTES=100000: every claim comes from 127.0.0.1, which the per-IP claim limit (10 per 15 minutes) would otherwise stop',
      ],
    };
  } finally {
    await stopGracefully(service);
  }
}
