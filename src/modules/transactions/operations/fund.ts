import { STABLECOIN_SYMBOL } from '../../../adapters/chain/contracts.ts';
import { encodeMint } from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Operation, OperationContext } from '../../../deps.ts';
import { GAS_DECIMALS, parseAmount, STABLE_DECIMALS } from '../../../lib/money.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, fail, withMetadata } from '../../../worker/steps.ts';
import { settle, submitOnce } from '../../../worker/submissions.ts';
import { lockUser } from '../../accounts/accounts.repository.ts';
import { transactionWallet } from '../../wallets/wallets.service.ts';
import { sumSince } from '../transactions.repository.ts';

export const FAUCET_CAP_BASE_UNITS = 1000n * 10n ** BigInt(STABLE_DECIMALS);
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The sandbox faucet: admitted under the account's rolling 24-hour cap, then the operator sends the wallet a gas
 * top-up and mints it test STABLE.
 */
async function runFund(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const amount = amountOf(row);
  if (row.status === 'QUEUED' && row.step === 'start') {
    // The cap check and the row's admission happen under the account's lock, so two workers cannot both admit.
    const admitted = await db.transaction(async (tx) => {
      await lockUser(tx, row.userId);
      const used = await sumSince(
        tx,
        row.userId,
        'FUND',
        new Date(ctx.deps.clock.now().getTime() - DAY_MS),
        row.id,
      );
      if (used + amount > FAUCET_CAP_BASE_UNITS) return false;
      await transition(tx, row.id, 'QUEUED', { step: 'admitted' });
      return true;
    });
    if (!admitted) {
      await fail(
        ctx,
        row,
        'faucet_cap_exceeded',
        'Faucet cap reached: at most 1000 STABLE per account over a rolling 24 hours.',
      );
      return;
    }
  }
  const wallet = await transactionWallet(ctx.deps, row);
  const operatorKey = ctx.network.operator.privateKey;
  const topUp = parseAmount(ctx.deps.config.faucet.gasTopUp, GAS_DECIMALS);
  const gas = await submitOnce(ctx, row, 'gas', operatorKey, async () => ({
    to: wallet.address,
    value: topUp,
  }));
  const fund = await submitOnce(ctx, row, 'fund', operatorKey, async () => ({
    to: ctx.network.contracts.stablecoin,
    data: encodeMint(wallet.address, amount),
  }));
  await transition(db, row.id, 'QUEUED', {
    status: 'PENDING',
    txHash: fund.txHash,
    step: 'submitted',
    metadata: withMetadata(row, { gasTxHash: gas.txHash }),
  });
  const gasReceipt = await settle(ctx, gas);
  const receipt = await settle(ctx, fund);
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    metadata: withMetadata(row, { gasTxHash: gasReceipt.transactionHash }),
    ...blockFields(receipt),
  });
}

export const fund: Operation = {
  token: STABLECOIN_SYMBOL,
  failureCode: 'faucet_failed',
  // Asked for by the wallet, so recorded `out`; its money comes in as public STABLE, which no batch waits for.
  direction: 'out',
  creditsWallet: false,
  spendsKeyLimit: false,
  letterLeg: false,
  queue: { path: '/fund' },
  run: runFund,
};
