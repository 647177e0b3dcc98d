import { eq } from 'drizzle-orm';
import { type Address, type Hex, maxUint256, type TransactionReceipt } from 'viem';
import { stablecoinAbi } from '../adapters/chain/contracts.ts';
import type { Network } from '../adapters/chain/types.ts';
import {
  encodeApprove,
  encodeConfidentialTransfer,
  encodeFinalizeUnwrap,
  encodeMint,
  encodeUnwrap,
  encodeWrap,
  findUnwrapRequest,
  getGasBalance,
  getStablecoinBalance,
  verifyConfidentialTransfer,
} from '../adapters/confidential/helpers.ts';
import { users } from '../db/schema/index.ts';
import type { TransactionType } from '../db/schema/transactions.ts';
import type { Deps } from '../deps.ts';
import { GAS_DECIMALS, parseAmount, STABLE_DECIMALS } from '../lib/money.ts';
import {
  sumSince,
  type TransactionRow,
  transition,
} from '../modules/transactions/transactions.repository.ts';
import { openWalletKey } from '../modules/wallets/custody.ts';
import { findWalletById, type WalletRow } from '../modules/wallets/wallets.repository.ts';
import { findSubmission, PreflightError, RevertedError, settle, submitOnce } from './submissions.ts';

/** What a failed operation's `errorCode` is, per type (the interface's 502 table, used asynchronously). */
export const FAILURE_CODE: Record<TransactionType, string> = {
  FUND: 'faucet_failed',
  MINT: 'mint_failed',
  TRANSFER: 'transfer_failed',
  REDEEM: 'redeem_failed',
  LETTER_ESCROW: 'escrow_failed',
  LETTER_CLAIM: 'claim_failed',
  LETTER_REFUND: 'refund_failed',
};

export const FAUCET_CAP_BASE_UNITS = 1000n * 10n ** BigInt(STABLE_DECIMALS);
const DAY_MS = 24 * 60 * 60 * 1000;
// `wrap` cannot be estimated before its `approve` is mined; measured ~306k gas.
const WRAP_GAS = 600_000n;
// An ERC-20 approval from zero costs ~46k gas; a fixed limit keeps it from depending on the allowance it finds.
const APPROVE_GAS = 100_000n;
/**
 * A confidential transfer measured ~408k gas. Estimating it runs the whole FHE transfer on the EVM a second time,
 * so it is sent with a fixed limit; a transfer that would revert is then mined as reverted (FAILED, nothing moved).
 */
export const CONFIDENTIAL_TRANSFER_GAS = 800_000n;

export interface OperationContext {
  deps: Deps;
  network: Network;
}

export type FailureHook = (ctx: OperationContext, row: TransactionRow) => Promise<void>;
/** What else must change when a transaction of a type fails (a letter leg puts its letter back, say). */
const failureHooks: Partial<Record<TransactionType, FailureHook>> = {};

export function registerFailureHook(type: TransactionType, hook: FailureHook): void {
  failureHooks[type] = hook;
}

/** Marks the row FAILED: only ever called when nothing moved on-chain for it. */
export async function fail(ctx: OperationContext, row: TransactionRow, code: string, message: string) {
  const failed = await transition(ctx.deps.database.db, row.id, ['QUEUED', 'PENDING', 'SETTLING'], {
    status: 'FAILED',
    error: message,
    errorCode: code,
    leaseOwner: null,
    leaseUntil: null,
  });
  if (failed) await failureHooks[row.type]?.(ctx, failed);
  return failed;
}

export async function walletOf(ctx: OperationContext, row: TransactionRow): Promise<WalletRow> {
  const wallet = await findWalletById(ctx.deps.database.db, row.walletId);
  if (!wallet) throw new PreflightError('wallet_missing', 'The wallet of this transaction no longer exists.');
  return wallet;
}

/** Where a receipt landed, for the row's receipt (nota): block number, hash, and the last log's index. */
export function blockFields(receipt: TransactionReceipt, logIndex?: number) {
  return {
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
    logIndex: logIndex ?? receipt.logs[receipt.logs.length - 1]?.logIndex ?? null,
  };
}

/**
 * On sandbox networks the operator tops up a custodial wallet that is short of gas before it signs, so a wallet
 * that received confidential funds can move them without a separate faucet call.
 */
export async function ensureGas(
  ctx: OperationContext,
  row: TransactionRow,
  wallet: WalletRow,
): Promise<Hex | null> {
  const { config } = ctx.deps;
  if (config.environment !== 'sandbox') return null;
  const topUp = parseAmount(config.faucet.gasTopUp, GAS_DECIMALS);
  const balance = await getGasBalance(ctx.network, wallet.address as Address);
  const existing = row.metadata?.gasTxHash as Hex | undefined;
  if (balance >= topUp / 4n && !existing) return null;
  const submission = await submitOnce(
    ctx.deps,
    ctx.network,
    row.id,
    'gas',
    ctx.network.operator.privateKey,
    async () => ({
      to: wallet.address as Address,
      value: topUp,
    }),
  );
  await settle(ctx.deps, ctx.network, submission);
  return submission.txHash as Hex;
}

/**
 * QUEUED → PENDING once the step that carries the row's hash is broadcast, with the sponsored gas top-up's hash
 * when there was one. Returns the row's metadata as written.
 */
export async function markSubmitted(
  ctx: OperationContext,
  row: TransactionRow,
  txHash: string,
  gasTxHash: Hex | null,
) {
  const metadata = gasTxHash ? withMetadata(row, { gasTxHash }) : row.metadata;
  await transition(ctx.deps.database.db, row.id, 'QUEUED', {
    status: 'PENDING',
    txHash,
    step: 'submitted',
    metadata,
  });
  return metadata;
}

export function withMetadata(row: TransactionRow, extra: Record<string, unknown>) {
  return { ...(row.metadata ?? {}), ...extra };
}

async function runFund(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const amount = BigInt(row.amount);
  if (row.status === 'QUEUED' && row.step === 'start') {
    // The cap check and the row's admission happen under the account's lock, so two workers cannot both admit.
    const admitted = await db.transaction(async (tx) => {
      await tx.select({ id: users.id }).from(users).where(eq(users.id, row.userId)).for('update');
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
  const wallet = await walletOf(ctx, row);
  const operatorKey = ctx.network.operator.privateKey;
  const topUp = parseAmount(ctx.deps.config.faucet.gasTopUp, GAS_DECIMALS);
  const gas = await submitOnce(ctx.deps, ctx.network, row.id, 'gas', operatorKey, async () => ({
    to: wallet.address as Address,
    value: topUp,
  }));
  const fund = await submitOnce(ctx.deps, ctx.network, row.id, 'fund', operatorKey, async () => ({
    to: ctx.network.contracts.stablecoin,
    data: encodeMint(wallet.address as Address, amount),
  }));
  await transition(db, row.id, 'QUEUED', {
    status: 'PENDING',
    txHash: fund.txHash,
    step: 'submitted',
    metadata: withMetadata(row, { gasTxHash: gas.txHash }),
  });
  await settle(ctx.deps, ctx.network, gas);
  const receipt = await settle(ctx.deps, ctx.network, fund);
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    txHash: fund.txHash,
    metadata: withMetadata(row, { gasTxHash: gas.txHash }),
    ...blockFields(receipt),
  });
}

async function runMint(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const wallet = await walletOf(ctx, row);
  const key = openWalletKey(ctx.deps.keyring, wallet);
  const amount = BigInt(row.amount);
  const gasTxHash = await ensureGas(ctx, row, wallet);
  // Checked only before the wrap is signed: once it is (and maybe mined, before a crash kept the row at 'start'),
  // the balance it spent is gone, and refusing here would retry the row forever.
  if (row.step === 'start' && !(await findSubmission(ctx.deps, row.id, 'wrap'))) {
    const balance = await getStablecoinBalance(ctx.network, wallet.address as Address);
    if (balance < amount)
      throw new PreflightError('mint_failed', 'The public STABLE balance is too low to mint this amount.');
  }
  const token = ctx.network.contracts.confidentialToken;
  // The wrapper gets an unlimited allowance, once: two mints of one wallet in flight would otherwise overwrite each
  // other's exact approvals, and the row's outcome would hang on an approval race instead of on its own wrap.
  const wrapSigned = await findSubmission(ctx.deps, row.id, 'wrap');
  if (!wrapSigned) {
    const allowance = await ctx.network.publicClient.readContract({
      address: ctx.network.contracts.stablecoin,
      abi: stablecoinAbi,
      functionName: 'allowance',
      args: [wallet.address as Address, token],
    });
    if (allowance < amount) {
      const approve = await submitOnce(ctx.deps, ctx.network, row.id, 'approve', key, async () => ({
        to: ctx.network.contracts.stablecoin,
        data: encodeApprove(token, maxUint256),
        gas: APPROVE_GAS,
      }));
      // An approval moves nothing; whatever its fate, the wrap's own receipt decides the row.
      await settle(ctx.deps, ctx.network, approve).catch((error: unknown) => {
        if (!(error instanceof RevertedError)) throw error;
      });
    }
  }
  const wrap = await submitOnce(ctx.deps, ctx.network, row.id, 'wrap', key, async () => ({
    to: token,
    data: encodeWrap(wallet.address as Address, amount),
    gas: WRAP_GAS,
  }));
  const metadata = await markSubmitted(ctx, row, wrap.txHash, gasTxHash);
  const receipt = await settle(ctx.deps, ctx.network, wrap);
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    txHash: wrap.txHash,
    metadata,
    ...blockFields(receipt),
  });
}

async function runTransfer(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const wallet = await walletOf(ctx, row);
  const key = openWalletKey(ctx.deps.keyring, wallet);
  const amount = BigInt(row.amount);
  const to = row.toAddress as Address;
  const gasTxHash = await ensureGas(ctx, row, wallet);
  const token = ctx.network.contracts.confidentialToken;
  const submission = await submitOnce(ctx.deps, ctx.network, row.id, 'transfer', key, async () => {
    const encrypted = await ctx.network.rail.encryptAmount({
      contract: token,
      caller: wallet.address as Address,
      amount,
    });
    return { to: token, data: encodeConfidentialTransfer(to, encrypted), gas: CONFIDENTIAL_TRANSFER_GAS };
  });
  const metadata = await markSubmitted(ctx, row, submission.txHash, gasTxHash);
  const receipt = await settle(ctx.deps, ctx.network, submission);
  const verification = await verifyConfidentialTransfer({
    network: ctx.network,
    receipt,
    from: wallet.address as Address,
    to,
    expectedAmount: amount,
    decryptAs: key,
  });
  if (!verification.ok) {
    // An ERC-7984 transfer the sender cannot cover moves an encrypted zero: nothing moved, so it is FAILED.
    await fail(
      ctx,
      row,
      'transfer_failed',
      'The confidential balance was too low: the transfer moved nothing.',
    );
    return;
  }
  await transition(db, row.id, ['QUEUED', 'PENDING'], {
    status: 'CONFIRMED',
    txHash: submission.txHash,
    metadata,
    ...blockFields(receipt),
  });
}

async function runRedeem(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const { db } = ctx.deps.database;
  const wallet = await walletOf(ctx, row);
  const token = ctx.network.contracts.confidentialToken;
  let current = row;
  if (row.status !== 'SETTLING') {
    const key = openWalletKey(ctx.deps.keyring, wallet);
    const gasTxHash = await ensureGas(ctx, row, wallet);
    const unwrap = await submitOnce(ctx.deps, ctx.network, row.id, 'unwrap', key, async () => {
      const encrypted = await ctx.network.rail.encryptAmount({
        contract: token,
        caller: wallet.address as Address,
        amount: BigInt(row.amount),
      });
      return {
        to: token,
        data: encodeUnwrap(wallet.address as Address, wallet.address as Address, encrypted),
      };
    });
    const metadata = await markSubmitted(ctx, row, unwrap.txHash, gasTxHash);
    const receipt = await settle(ctx.deps, ctx.network, unwrap);
    const request = findUnwrapRequest(receipt, token);
    if (!request) throw new Error(`unwrap ${unwrap.txHash} emitted no UnwrapRequested event`);
    const moved = await transition(db, row.id, 'PENDING', {
      status: 'SETTLING',
      step: 'finalize',
      metadata: withMetadata({ ...row, metadata }, { unwrapRequestId: request.requestId }),
      ...blockFields(receipt),
    });
    if (!moved) return;
    current = moved;
  }
  const requestId = current.metadata?.unwrapRequestId as Hex;
  const decryption = await ctx.network.rail.publicDecrypt([requestId]);
  const cleartext = decryption.cleartexts[0] ?? 0n;
  if (cleartext === 0n) {
    // The burn was an encrypted zero (balance too low): nothing left the wallet and nothing is owed.
    await fail(ctx, current, 'redeem_failed', 'The confidential balance was too low: nothing was redeemed.');
    return;
  }
  const attempt = Number(current.metadata?.finalizeAttempt ?? 0);
  // An earlier finalize may have landed while its receipt could not be read: the payout is done, adopt it.
  for (let earlier = 0; earlier < attempt; earlier++) {
    const previous = await findSubmission(ctx.deps, row.id, `finalize-${earlier}`);
    if (!previous) continue;
    const landed = await ctx.network.publicClient
      .getTransactionReceipt({ hash: previous.txHash as Hex })
      .catch(() => null);
    if (landed?.status === 'success') {
      await settle(ctx.deps, ctx.network, previous);
      await transition(db, row.id, 'SETTLING', { status: 'SETTLED', settlementTxHash: previous.txHash });
      return;
    }
  }
  const finalize = await submitOnce(
    ctx.deps,
    ctx.network,
    row.id,
    `finalize-${attempt}`,
    ctx.network.operator.privateKey,
    async () => ({
      to: token,
      data: encodeFinalizeUnwrap(requestId, cleartext, decryption.decryptionProof),
    }),
  );
  try {
    await settle(ctx.deps, ctx.network, finalize);
  } catch (error) {
    if (!(error instanceof RevertedError)) throw error; // no receipt yet: the same bytes are waited for again
    // The payout reverted: the row stays SETTLING and the next attempt signs a fresh finalize. The burn has
    // moved the funds, so this is never a failure of the row (a transient fault, not a RevertedError).
    await transition(db, row.id, 'SETTLING', {
      metadata: withMetadata(current, { finalizeAttempt: attempt + 1 }),
    });
    throw new Error(`finalizeUnwrap ${finalize.txHash} reverted; a fresh one will be signed`, {
      cause: error,
    });
  }
  await transition(db, row.id, 'SETTLING', { status: 'SETTLED', settlementTxHash: finalize.txHash });
}

export type Runner = (ctx: OperationContext, row: TransactionRow) => Promise<void>;

/** The state machine of every transaction type; letter legs register theirs from the letters module. */
export const runners: Partial<Record<TransactionType, Runner>> = {
  FUND: runFund,
  MINT: runMint,
  TRANSFER: runTransfer,
  REDEEM: runRedeem,
};

export function registerRunner(type: TransactionType, runner: Runner): void {
  runners[type] = runner;
}
