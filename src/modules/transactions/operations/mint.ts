import { maxUint256 } from 'viem';
import { CONFIDENTIAL_TOKEN_SYMBOL, stablecoinAbi } from '../../../adapters/chain/contracts.ts';
import { encodeApprove, encodeWrap, getStablecoinBalance } from '../../../adapters/confidential/helpers.ts';
import type { TransactionRow } from '../../../db/schema/index.ts';
import type { Deps, Operation, OperationContext, WalletIdentity } from '../../../deps.ts';
import { AppError } from '../../../lib/errors.ts';
import { formatAmount } from '../../../lib/money.ts';
import { transition } from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, markSubmitted } from '../../../worker/steps.ts';
import { findSubmission } from '../../../worker/submissions.repository.ts';
import { PreflightError, RevertedError, settle, submitOnce } from '../../../worker/submissions.ts';
import { requireNetwork } from '../../network/network.service.ts';
import { spendingWallet } from '../../wallets/wallets.service.ts';

// `wrap` cannot be estimated before its `approve` is mined; measured ~306k gas.
const WRAP_GAS = 600_000n;
// An ERC-20 approval from zero costs ~46k gas; a fixed limit keeps it from depending on the allowance it finds.
const APPROVE_GAS = 100_000n;

/** Public STABLE into confidential cSTABLE: approve the wrapper once, then wrap. */
async function runMint(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const { wallet, key, gasTxHash } = await spendingWallet(ctx, row);
  const amount = amountOf(row);
  // Checked only before the wrap is signed: once it is (and maybe mined, before a crash kept the row at 'start'),
  // the balance it spent is gone, and refusing here would retry the row forever.
  const wrapSigned = await findSubmission(db, row.id, 'wrap');
  if (row.step === 'start' && !wrapSigned) {
    const balance = await getStablecoinBalance(ctx.network, wallet.address);
    if (balance < amount)
      throw new PreflightError('The public STABLE balance is too low to mint this amount.');
  }
  const token = ctx.network.contracts.confidentialToken;
  // The wrapper gets an unlimited allowance, once: two mints of one wallet in flight would otherwise overwrite each
  // other's exact approvals, and the row's outcome would hang on an approval race instead of on its own wrap.
  if (!wrapSigned) {
    const allowance = await ctx.network.publicClient.readContract({
      address: ctx.network.contracts.stablecoin,
      abi: stablecoinAbi,
      functionName: 'allowance',
      args: [wallet.address, token],
    });
    // An approval this row signed already is sent again even when the allowance is enough now (another mint's
    // approval landed first): its bytes hold the wallet's next nonce, and left unsent they would hold back every
    // later transaction of the wallet (a kill -9 between its signing and its broadcast left exactly that).
    if (allowance < amount || (await findSubmission(db, row.id, 'approve'))) {
      const approve = await submitOnce(ctx, row, 'approve', key, async () => ({
        to: ctx.network.contracts.stablecoin,
        data: encodeApprove(token, maxUint256),
        gas: APPROVE_GAS,
      }));
      // An approval moves nothing; whatever its fate, the wrap's own receipt decides the row.
      await settle(ctx, approve).catch((error: unknown) => {
        if (!(error instanceof RevertedError)) throw error;
      });
    }
  }
  const wrap = await submitOnce(ctx, row, 'wrap', key, async () => ({
    to: token,
    data: encodeWrap(wallet.address, amount),
    gas: WRAP_GAS,
  }));
  const metadata = await markSubmitted(ctx, row, wrap.txHash, gasTxHash);
  const receipt = await settle(ctx, wrap);
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    metadata,
    ...blockFields(receipt),
  });
}

/** The public balance must cover the amount (the worker checks again before it signs). */
async function assertPublicBalance(deps: Deps, wallet: WalletIdentity, amount: bigint): Promise<void> {
  const balance = await getStablecoinBalance(requireNetwork(deps), wallet.address);
  if (balance < amount) {
    throw new AppError(
      'insufficient_balance',
      `The wallet holds ${formatAmount(balance)} STABLE: too little to mint ${formatAmount(amount)}.`,
      {
        details: { available: formatAmount(balance), requested: formatAmount(amount) },
      },
    );
  }
}

export const mint: Operation = {
  token: CONFIDENTIAL_TOKEN_SYMBOL,
  failureCode: 'mint_failed',
  direction: 'out',
  creditsWallet: true,
  spendsKeyLimit: false,
  letterLeg: false,
  queue: { path: '/mint', check: assertPublicBalance },
  run: runMint,
};
