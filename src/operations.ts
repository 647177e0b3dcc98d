/**
 * The registry of transaction types: what each one is (its token, its failure code) and does (its state machine).
 * Assembled here, in the composition root, from the modules that own the types; `createDeps` puts it on `Deps`,
 * where the worker loop and the inline driver of letter legs find it. A type without an operation is a compile
 * error.
 */
import type { Operations } from './deps.ts';
import { claim } from './modules/letters/operations/claim.ts';
import { escrow } from './modules/letters/operations/escrow.ts';
import { refund } from './modules/letters/operations/refund.ts';
import { fund } from './modules/transactions/operations/fund.ts';
import { mint } from './modules/transactions/operations/mint.ts';
import { redeem } from './modules/transactions/operations/redeem.ts';
import { transfer } from './modules/transactions/operations/transfer.ts';

export const operations: Operations = {
  FUND: fund,
  MINT: mint,
  TRANSFER: transfer,
  REDEEM: redeem,
  LETTER_ESCROW: escrow,
  LETTER_CLAIM: claim,
  LETTER_REFUND: refund,
};
