/**
 * A transaction in plain words: what happened (never the raw type name), which way the money went for the wallet,
 * and who was on the other side. Shared by the activity list, a transaction's details and its receipt.
 */
import { shortHex } from './dom.ts';
import { plainCode } from './errors.ts';
import { formatAmount } from './money.ts';
import type { Transaction } from './types.ts';

/**
 * Which way the money moved for the row's wallet: into it, out of it, between its own balances, or not at all (a
 * FAILED transaction moved nothing, whichever way it was meant to go).
 */
export type Flow = 'in' | 'out' | 'convert' | 'none';

/** What the views read of a transaction's kind; `status` when known (a FAILED one moved nothing). */
type Kind = Pick<Transaction, 'type' | 'direction'> & Partial<Pick<Transaction, 'status'>>;

type TxFacts = Pick<
  Transaction,
  'type' | 'direction' | 'amount' | 'token' | 'counterparty' | 'fromAddress' | 'toAddress'
> &
  Partial<Pick<Transaction, 'status'>>;

/** Whether the transaction ended FAILED: it was not done and nothing moved. */
export function failed(tx: Partial<Pick<Transaction, 'status'>>): boolean {
  return tx.status === 'FAILED';
}

/** A FAILED transaction, said as not done. */
const NOT_DONE: Record<string, string> = {
  FUND: 'Test money not added',
  MINT: 'Not made private',
  REDEEM: 'Not made public',
  TRANSFER: 'Not sent',
  LETTER_ESCROW: 'Letter not sent',
  LETTER_CLAIM: 'Letter claim not paid',
  LETTER_REFUND: 'Letter refund not paid',
};

/**
 * Why a FAILED transaction moved nothing, as one sentence for every view of it: "This transfer was not sent:
 * nothing moved. <the reason in words>".
 */
export function failedSentence(tx: Kind & Pick<Transaction, 'errorCode' | 'error'>): string {
  const what =
    tx.type === 'TRANSFER' && tx.direction !== 'in'
      ? 'This transfer was not sent'
      : `${NOT_DONE[tx.type] ?? 'Not done'}`;
  return `${what}: nothing moved. ${plainCode(tx.errorCode, tx.error)}`;
}

/**
 * `direction: "in"` is money received (a transfer in, a letter claimed, a refund). A faucet payment is asked for,
 * so the service records it `out`, but its money comes in; mint and redeem move money between the wallet's own
 * public and confidential balances.
 */
export function flowOf(tx: Kind): Flow {
  if (failed(tx)) return 'none';
  if (tx.direction === 'in') return 'in';
  switch (tx.type) {
    case 'FUND':
      return 'in';
    case 'MINT':
    case 'REDEEM':
      return 'convert';
    default:
      return 'out';
  }
}

/** What happened, in a few plain words ("Received", "Letter claimed"). */
export function typeWords(tx: Kind): string {
  if (failed(tx)) return NOT_DONE[tx.type] ?? 'Not done';
  switch (tx.type) {
    case 'FUND':
      return 'Test money added';
    case 'MINT':
      return 'Made private';
    case 'REDEEM':
      return 'Made public';
    case 'TRANSFER':
      return tx.direction === 'in' ? 'Received' : 'Sent';
    case 'LETTER_ESCROW':
      return 'Letter sent';
    case 'LETTER_CLAIM':
      return 'Letter claimed';
    case 'LETTER_REFUND':
      return 'Letter refunded';
    default:
      return 'Transaction';
  }
}

/** A longer sentence for the details view. */
export function typeExplained(tx: Kind): string {
  if (failed(tx)) return 'It failed, so nothing moved: no money left or reached any wallet.';
  switch (tx.type) {
    case 'FUND':
      return 'Test money from the sandbox faucet, paid into this wallet as public STABLE.';
    case 'MINT':
      return 'Public STABLE turned into private (confidential) cSTABLE in the same wallet, one for one.';
    case 'REDEEM':
      return 'Private cSTABLE turned back into public STABLE in the same wallet, one for one.';
    case 'TRANSFER':
      return tx.direction === 'in'
        ? 'Money another address sent to this wallet.'
        : 'Money this wallet sent to another address.';
    case 'LETTER_ESCROW':
      return 'The amount of a letter of value, held in escrow until someone claims it or it is voided.';
    case 'LETTER_CLAIM':
      return 'The amount of a letter of value, paid out of escrow into this wallet when it was claimed.';
    case 'LETTER_REFUND':
      return 'The amount of a voided or expired letter, returned from escrow to the wallet that sent it.';
    default:
      return '';
  }
}

export const FLOW_ARROWS: Record<Flow, { symbol: string; words: string }> = {
  in: { symbol: '↓', words: 'Money in' },
  out: { symbol: '↑', words: 'Money out' },
  convert: { symbol: '⇄', words: 'Between your balances' },
  none: { symbol: '✗', words: 'Nothing moved' },
};

/**
 * The amount with its sign for the wallet (`+12.50 cSTABLE`), or "encrypted" when only the receiver can read it; a
 * FAILED one unsigned (it was neither debited nor credited).
 */
export function signedAmount(tx: Kind & Pick<Transaction, 'amount' | 'token'>): string {
  if (tx.amount === null) return `encrypted ${tx.token}`;
  const flow = flowOf(tx);
  const sign = flow === 'in' ? '+' : flow === 'out' ? '−' : '';
  return `${sign}${formatAmount(tx.amount)} ${tx.token}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The other side, short: "from 0x12…abcd", "to Letter escrow", or null when there is none. */
export function partyWords(tx: TxFacts): string | null {
  const named = (value: string | null) => (value && ADDRESS.test(value) ? shortHex(value, 4) : value);
  // The side it was meant for, also when it failed ("Not sent · to 0x12…abcd").
  const flow = flowOf({ type: tx.type, direction: tx.direction });
  if (flow === 'convert') return null;
  if (tx.type === 'FUND') return 'from the faucet';
  if (tx.type === 'LETTER_ESCROW' || tx.type === 'LETTER_CLAIM' || tx.type === 'LETTER_REFUND') {
    return flow === 'in' ? 'from letter escrow' : 'to letter escrow';
  }
  if (flow === 'in') {
    const from = named(tx.counterparty ?? tx.fromAddress);
    return from ? `from ${from}` : null;
  }
  const to = named(tx.counterparty ?? tx.toAddress);
  return to ? `to ${to}` : null;
}
