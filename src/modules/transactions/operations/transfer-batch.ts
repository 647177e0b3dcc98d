/**
 * Confidential transfers ready together, sent as one transaction under one input proof (issue 18).
 *
 * A proof is bound to one (contract, caller) pair, and each custodial wallet is its own caller: sent alone, every
 * transfer needs a proof of its own (20-30 s of client CPU with real FHE, `npm run bench -- proofs`). Through the
 * TransferBatcher (contracts/TransferBatcher.sol), the operator sends the batch and every amount is encrypted at
 * once for (batcher, operator); each leg is the token's `confidentialTransferFrom(wallet, to, amount)`, the batcher
 * being each wallet's ERC-7984 operator (the wallet's own `setOperator(batcher, until)`, sent here before its first
 * batched transfer and again when less than `GRANT_RENEW_SECONDS` remain).
 *
 * Each leg keeps its own row and states: QUEUED (step `batched`, `batch_id` = the first leg's id) → PENDING with the
 * batch's hash → CONFIRMED, or FAILED alone when its `ConfidentialTransfer` moved an encrypted zero. The batch's
 * transaction is signed once and stored before it is broadcast, under the first leg (`chain_submissions`, purpose
 * `batch`): after a crash any leg's run resumes the batch and rebroadcasts those bytes. A batch that cannot be sent
 * (the chain refuses it before signing) or that reverted moved nothing: its legs are queued again to go alone.
 */
import type { Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  encodeBatchTransfer,
  encodeSetOperator,
  findOperatorGrant,
  listConfidentialTransfers,
} from '../../../adapters/confidential/helpers.ts';
import type { SubmissionRow, TransactionRow, WalletRow } from '../../../db/schema/index.ts';
import { type OperationContext, typesWhere } from '../../../deps.ts';
import {
  assignBatch,
  confirmBatchLegs,
  deferLeased,
  dissolveBatch,
  findBatchLegs,
  findRowsAwaitingEarlierCredits,
  findTransactionById,
  markBatchPending,
} from '../../../worker/outbox.repository.ts';
import { amountOf, blockFields, ensureGas, fail, recipientOf } from '../../../worker/steps.ts';
import {
  BATCH_PURPOSE,
  findSignedFor,
  findSubmission,
  findUnminedFrom,
  TRANSFER_PURPOSE,
} from '../../../worker/submissions.repository.ts';
import { PreflightError, RevertedError, settle, submitOnce } from '../../../worker/submissions.ts';
import { openWalletKey } from '../../wallets/custody.ts';
import { forgetBatcherGrants, recordBatcherGrant } from '../../wallets/wallets.repository.ts';
import { transactionWallet } from '../../wallets/wallets.service.ts';

/** How soon a transfer that waits for an earlier mint or claim of its wallet is looked at again. */
const WAIT_FOR_EARLIER_CREDIT_MS = 250;

/** How long a wallet's grant lasts, and how long before its end it is renewed. */
const GRANT_SECONDS = 90 * 24 * 3600;
const GRANT_RENEW_SECONDS = 7 * 24 * 3600;

/**
 * The fhEVM meters FHE work per transaction in HCU (`HCULimit.sol` of the host contracts, on every network): at most
 * 20,000,000 in all and 5,000,000 along any chain of dependent operations. A leg is ERC-7984's `_update`:
 * `ge` (116k) and `sub` (133k) then `select` (55k) on the sender's balance; `select` (55k) of the transferred amount;
 * `add` (133k), `ge` (116k), `select` (55k) on the recipient's. Legs that share an account chain their balances, so
 * a batch is cut where the deepest chain, or the sum, would pass the limits (with a margin).
 */
const HCU = { ge: 116_000, sub: 133_000, add: 133_000, select: 55_000 } as const;
const HCU_PER_LEG = 2 * HCU.ge + HCU.sub + HCU.add + 3 * HCU.select;
const HCU_TOTAL_BUDGET = 18_000_000;
const HCU_DEPTH_BUDGET = 4_500_000;

/**
 * A batch's gas limit, set rather than estimated: the estimate executed the whole batch once more on the node (every
 * leg's FHE operations) just before the batch itself, ~150-250 ms each on the embedded chain under load. Measured:
 * 337-346k gas per leg (`npm run bench -- transfers`, legs between wallets that already hold cSTABLE), ~400k for a
 * lone transfer; a leg to a fresh account writes a few more slots. 600k per leg covers either with room to spare
 * (unused gas is not charged), and 32 legs stay well under a 30M block. A limit that was short after all reverts
 * the batch, which moved nothing: its legs go alone, as after any revert.
 */
const BATCH_BASE_GAS = 100_000n;
const BATCH_GAS_PER_LEG = 600_000n;

export function batchGasLimit(legs: number): bigint {
  return BATCH_BASE_GAS + BATCH_GAS_PER_LEG * BigInt(legs);
}

/**
 * Splits legs, in order, into batches that stay within the HCU limits and `max` legs: each leg joins the first
 * batch it fits in (its sender's and recipient's chains simulated as `_update` deepens them).
 */
export function planBatches<T extends { from: Address; to: Address }>(
  legs: readonly T[],
  max: number,
): T[][] {
  const batches: { legs: T[]; depth: Map<string, number> }[] = [];
  for (const leg of legs) {
    const from = leg.from.toLowerCase();
    const to = leg.to.toLowerCase();
    const fits = batches.find((batch) => {
      if (batch.legs.length >= max || (batch.legs.length + 1) * HCU_PER_LEG > HCU_TOTAL_BUDGET) return false;
      const next = deepen(batch.depth, from, to);
      return Math.max(next.from, next.to) < HCU_DEPTH_BUDGET;
    });
    const batch = fits ?? { legs: [], depth: new Map<string, number>() };
    if (!fits) batches.push(batch);
    const next = deepen(batch.depth, from, to);
    batch.depth.set(from, next.from);
    batch.depth.set(to, next.to);
    batch.legs.push(leg);
  }
  return batches.map((batch) => batch.legs);
}

function deepen(depth: ReadonlyMap<string, number>, from: string, to: string): { from: number; to: number } {
  const sender = depth.get(from) ?? 0;
  const success = sender + HCU.ge;
  const transferred = success + HCU.select;
  const senderAfter = Math.max(success, sender + HCU.sub) + HCU.select;
  const recipient = from === to ? senderAfter : (depth.get(to) ?? 0);
  return { from: senderAfter, to: Math.max(recipient, transferred) + HCU.add + HCU.ge + HCU.select };
}

/** Whether a row may join a batch: a QUEUED transfer never started, never batched, not sent back to go alone. */
export function canJoinTransferBatch(row: TransactionRow): boolean {
  return row.status === 'QUEUED' && row.step === 'start' && row.batchId === null;
}

/** The purpose of a wallet's `setOperator(batcher, until)`, stored under the row that needed it. */
const GRANT_PURPOSE = 'operator-grant';

/**
 * The batcher is the wallet's operator for at least `GRANT_RENEW_SECONDS` more, or the wallet grants it now
 * (sponsored gas on sandbox networks), recorded from the mined `OperatorSet` event.
 */
async function ensureOperatorGrant(
  ctx: OperationContext,
  row: TransactionRow,
  wallet: WalletRow,
  batcher: Address,
): Promise<void> {
  const now = Math.floor(ctx.deps.clock.now().getTime() / 1000);
  if (wallet.batcherOperatorUntil !== null && wallet.batcherOperatorUntil > now + GRANT_RENEW_SECONDS) return;
  // A grant already signed for this wallet (under another row, before a fault or a crash) is sent again rather
  // than signed a second time behind it.
  const unmined = await findUnminedFrom(ctx.deps.database.db, wallet.address, GRANT_PURPOSE);
  if (unmined.length > 0) {
    await resendGrants(ctx, wallet, batcher, unmined);
    return;
  }
  await ensureGas(ctx, row, wallet);
  await sendOperatorGrant(ctx, row, wallet, batcher);
}

/** Signs the row's grant once (or resends the stored bytes), waits for it and records its `OperatorSet`. */
async function sendOperatorGrant(
  ctx: OperationContext,
  row: Pick<TransactionRow, 'id'>,
  wallet: WalletRow,
  batcher: Address,
): Promise<void> {
  const token = ctx.network.contracts.confidentialToken;
  const key = openWalletKey(ctx.deps.keyring, wallet);
  const until = Math.floor(ctx.deps.clock.now().getTime() / 1000) + GRANT_SECONDS;
  const submission = await submitOnce(ctx, row, GRANT_PURPOSE, key, async () => ({
    to: token,
    data: encodeSetOperator(batcher, until),
  }));
  const receipt = await settle(ctx, submission);
  const granted = findOperatorGrant(receipt, { token, holder: wallet.address, operator: batcher });
  if (granted === null) throw new Error(`operator grant ${submission.txHash} holds no OperatorSet event`);
  await recordBatcherGrant(ctx.deps.database.db, wallet.id, granted);
}

/**
 * Sends again, lowest nonce first, the wallet's grants that never reached a block (their broadcast or receipt
 * failed, or the process died). Until such bytes are mined, every later transaction of the wallet waits behind them
 * in the pool.
 */
async function resendGrants(
  ctx: OperationContext,
  wallet: WalletRow,
  batcher: Address,
  unmined: readonly SubmissionRow[],
): Promise<void> {
  for (const signed of unmined) {
    await sendOperatorGrant(ctx, { id: signed.transactionId }, wallet, batcher);
  }
}

/**
 * Before a transfer that goes alone signs anything, the wallet's grants that never reached a block are sent again
 * (see `resendGrants`): its own transfer would otherwise wait behind them. One indexed read when there are
 * none (the row's sender is its wallet's address).
 */
export async function resumeOperatorGrant(ctx: OperationContext, row: TransactionRow): Promise<void> {
  const batcher = ctx.network.transferBatcher;
  if (!batcher || !row.fromAddress) return;
  const unmined = await findUnminedFrom(ctx.deps.database.db, row.fromAddress, GRANT_PURPOSE);
  if (unmined.length === 0) return;
  await resendGrants(ctx, await transactionWallet(ctx.deps, row), batcher, unmined);
}

/**
 * Sends the rows (leased, `canJoinTransferBatch`) as one batch where it can. Returns the rows that go alone: those
 * whose own transfer is already signed, those whose wallet could not grant the batcher, the legs of a batch that
 * was dissolved, a planned batch of one, and all of them when fewer than two or no batcher exists. Rows whose
 * wallet awaits an earlier mint or claim wait (their lease is released with the others'), and so does a row that
 * did not join its batch.
 */
export async function runTransferBatch(
  ctx: OperationContext,
  rows: TransactionRow[],
): Promise<TransactionRow[]> {
  const batcher = ctx.network.transferBatcher;
  if (!batcher || rows.length < 2) return rows;
  const { db } = ctx.deps.database;
  const ids = rows.map((row) => row.id);
  // A row whose own transfer was signed already (the process died between its broadcast and its PENDING) carries
  // that signature through alone: in a batch too, its money would move twice.
  const signedAlone = new Set(await findSignedFor(db, ids, TRANSFER_PURPOSE));
  const credits = typesWhere(ctx.deps.operations, (operation) => operation.creditsWallet);
  const behind = new Set(await findRowsAwaitingEarlierCredits(db, ids, credits));
  const waiting = rows.filter((row) => behind.has(row.id) && !signedAlone.has(row.id));
  if (waiting.length > 0) {
    // They join a later batch, once the money their wallet asked for before them has arrived.
    await deferLeased(db, waiting, new Date(ctx.deps.clock.now().getTime() + WAIT_FOR_EARLIER_CREDIT_MS));
  }
  const byWallet = Map.groupBy(
    rows.filter((row) => !behind.has(row.id) && !signedAlone.has(row.id)),
    (row) => row.walletId,
  );
  const alone: TransactionRow[] = rows.filter((row) => signedAlone.has(row.id));
  const ready: TransactionRow[] = [];
  await Promise.all(
    [...byWallet.values()].map(async (group) => {
      const [first] = group;
      if (!first) return;
      try {
        await ensureOperatorGrant(ctx, first, await transactionWallet(ctx.deps, first), batcher);
        ready.push(...group);
      } catch {
        // Run alone, the row meets the same fault in `run`, which words it (or retries it) as it always has.
        alone.push(...group);
      }
    }),
  );
  const planned = planBatches(
    ready.map((row) => ({ row, from: senderOf(row), to: recipientOf(row) })),
    ctx.deps.config.worker.batchMax,
  );
  // Every batch runs to its end before a fault of one is reported: the worker then retries all the rows.
  const outcomes = await Promise.allSettled(
    planned.map(async (legs): Promise<TransactionRow[]> => {
      const rowsOfBatch = legs.map((leg) => leg.row);
      if (rowsOfBatch.length < 2) return rowsOfBatch;
      const joined = await assignBatch(
        db,
        rowsOfBatch.map((row) => row.id),
      );
      // A row that did not join moved meanwhile (another holder has it): it is not this runner's to send.
      const batchId = joined[0];
      if (!batchId) return [];
      const outcome = await driveBatch(ctx, batchId);
      return outcome === 'dissolved' ? rowsOfBatch.filter((row) => joined.includes(row.id)) : [];
    }),
  );
  const fault = outcomes.find((outcome) => outcome.status === 'rejected');
  if (fault) throw fault.reason;
  return [...alone, ...outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []))];
}

const FINISHED = new Set(['CONFIRMED', 'FAILED']);

/**
 * Whether the holder of this leg's lease may drive its batch. One driver at a time, as for a row of its own: the
 * holder of the first leg's lease (the worker that made the batch holds them all), or of any leg once the first
 * is finished (the batch's receipt was read then: what is left is verification, which any leg may redo).
 */
export async function drivesItsBatch(ctx: OperationContext, leg: TransactionRow): Promise<boolean> {
  if (!leg.batchId || leg.batchId === leg.id) return true;
  const first = await findTransactionById(ctx.deps.database.db, leg.batchId);
  return !first || first.batchId !== leg.batchId || FINISHED.has(first.status);
}

/**
 * Drives a batch to its end from any of its legs: signs (once) and broadcasts the batch, marks the legs PENDING,
 * waits for the receipt and settles every leg by its own `ConfidentialTransfer`. `dissolved` when the batch moved
 * nothing and its legs were queued again to go alone.
 */
export async function driveBatch(ctx: OperationContext, batchId: string): Promise<'settled' | 'dissolved'> {
  const { db } = ctx.deps.database;
  const batcher = ctx.network.transferBatcher;
  const legs = await findBatchLegs(db, batchId);
  if (legs.length === 0) return 'dissolved';
  if (legs.every((leg) => FINISHED.has(leg.status))) return 'settled';
  if (!batcher) throw new Error(`batch ${batchId} was made where TRANSFER_BATCHER_ADDRESS is no longer set`);
  const token = ctx.network.contracts.confidentialToken;
  const operator = ctx.network.operator;
  const plan = legs.map((leg) => ({
    row: leg,
    from: senderOf(leg),
    to: recipientOf(leg),
    amount: amountOf(leg),
  }));
  let submission: Awaited<ReturnType<typeof submitOnce>>;
  try {
    submission = await submitOnce(ctx, { id: batchId }, BATCH_PURPOSE, operator.privateKey, async () => {
      const encrypted = await ctx.network.rail.encryptAmounts({
        contract: batcher,
        caller: privateKeyToAccount(operator.privateKey).address,
        amounts: plan.map((leg) => leg.amount),
      });
      ctx.deps.metrics.batchSize.observe(plan.length);
      return { to: batcher, data: encodeBatchTransfer(plan, encrypted), gas: batchGasLimit(plan.length) };
    });
  } catch (error) {
    // A broadcast the chain refused outright, withdrawn with its nonce: nothing is stored for the batch, nothing
    // moved. (Its gas limit is set, not estimated: a batch the chain would refuse when run reverts, below.)
    if (error instanceof PreflightError && !(await findSubmission(db, batchId, BATCH_PURPOSE))) {
      await dissolveBatch(ctx.deps.database, batchId);
      return 'dissolved';
    }
    throw error;
  }
  await markBatchPending(ctx.deps.database, batchId, submission.txHash);
  let receipt: Awaited<ReturnType<typeof settle>>;
  try {
    receipt = await settle(ctx, submission);
  } catch (error) {
    if (error instanceof RevertedError) {
      // A revert is most likely a grant the service counts on and the chain no longer has (a wallet took it back,
      // or it lapsed): its wallets grant the batcher again before their next batch, rather than revert it too.
      await forgetBatcherGrants(db, [...new Set(plan.map((leg) => leg.row.walletId))]);
      await dissolveBatch(ctx.deps.database, batchId);
      return 'dissolved';
    }
    throw error;
  }
  const transfers = listConfidentialTransfers(receipt, token);
  const handles = plan.map((leg, index) => {
    const transfer = transfers[index];
    if (
      !transfer ||
      transfer.from.toLowerCase() !== leg.from.toLowerCase() ||
      transfer.to.toLowerCase() !== leg.to.toLowerCase()
    ) {
      throw new Error(`batch ${submission.txHash}: leg ${index} has no ConfidentialTransfer of its own`);
    }
    return transfer.handle;
  });
  // The batcher grants the operator every leg's transferred handle: one decryption request verifies them all.
  const moved = await ctx.network.rail.userDecryptMany({
    handles: handles.map((handle) => ({ handle, contract: token })),
    privateKey: operator.privateKey,
  });
  const movedWhole = plan.map((leg, index) => moved[index] === leg.amount);
  // Confirmed together, each at the index of its own ConfidentialTransfer (every leg has one: checked above).
  const { blockNumber, blockHash } = blockFields(receipt);
  await confirmBatchLegs(
    ctx.deps.database,
    batchId,
    plan.flatMap((leg, index) =>
      movedWhole[index] ? [{ id: leg.row.id, logIndex: transfers[index]?.logIndex ?? null }] : [],
    ),
    { txHash: receipt.transactionHash, blockNumber, blockHash },
  );
  for (const [index, leg] of plan.entries()) {
    if (movedWhole[index]) continue;
    // An ERC-7984 transfer the sender cannot cover moves an encrypted zero: this leg moved nothing.
    await fail(
      ctx,
      leg.row,
      'transfer_failed',
      'The confidential balance was too low: the transfer moved nothing.',
    );
  }
  return 'settled';
}

function senderOf(row: TransactionRow): Address {
  if (!row.fromAddress) throw new PreflightError(`Transaction ${row.id} has no sender.`);
  return row.fromAddress as Address;
}
