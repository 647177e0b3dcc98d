/**
 * A transaction in plain words: what happened (never the raw type name), which way the money went for the wallet,
 * and who was on the other side. Shared by the activity list, a transaction's details and its receipt.
 */
import { shortHex } from './dom.ts';
import { plainCode } from './errors.ts';
import { formatAmount } from './money.ts';
import { IN_FLIGHT, type Transaction } from './types.ts';

/**
 * Which way the money moved for the row's wallet: into it, out of it, between its own balances, not yet (a
 * transaction still QUEUED, PENDING or SETTLING: nothing is final), or not at all (a FAILED transaction moved
 * nothing, whichever way it was meant to go).
 */
export type Flow = 'in' | 'out' | 'convert' | 'waiting' | 'none';

/** What the views read of a transaction's kind; `status` when known (a FAILED one moved nothing). */
type Kind = Pick<Transaction, 'type' | 'direction'> &
  Partial<Pick<Transaction, 'status' | 'metadata' | 'txHash'>>;

type TxFacts = Pick<
  Transaction,
  'type' | 'direction' | 'amount' | 'token' | 'counterparty' | 'fromAddress' | 'toAddress'
> &
  Partial<Pick<Transaction, 'status'>>;

/** Whether the transaction ended FAILED: it was not done and nothing moved. */
export function failed(tx: Partial<Pick<Transaction, 'status'>>): boolean {
  return tx.status === 'FAILED';
}

/**
 * Whether the transaction is still on its way (QUEUED, PENDING, SETTLING): it is said as being done ("Sending…"),
 * unsigned, never as done. Only CONFIRMED and SETTLED read as done.
 */
export function underway(tx: Partial<Pick<Transaction, 'status'>>): boolean {
  return tx.status !== undefined && IN_FLIGHT.includes(tx.status);
}

/**
 * Whether a FAILED transaction got as far as the chain (it has a chain transaction, which moved nothing): it was
 * sent and failed there, where one refused before the chain was never sent.
 */
export function failedOnChain(tx: Partial<Pick<Transaction, 'status' | 'txHash'>>): boolean {
  return failed(tx) && typeof tx.txHash === 'string' && tx.txHash !== '';
}

/** A transaction type, as the service names it (a closed union: the words below cover every one). */
export type TransactionType = Transaction['type'];

/** What the app says of one transaction type. */
interface TypeWords {
  /** What happened, in a few plain words. */
  readonly done: string;
  /** A FAILED one, said as not done. */
  readonly notDone: string;
  /** One still on its way (QUEUED, PENDING, SETTLING), said as being done. */
  readonly underway: string;
  /** A longer sentence for the details view. */
  readonly explained: string;
  /** Its name in a sentence for screen readers ("Transfer of 5 cSTABLE"). */
  readonly noun: string;
  /** Which way its money moves for the wallet when it is recorded `out` (a row recorded `in` moved money in). */
  readonly flow: Exclude<Flow, 'none' | 'waiting'>;
  /**
   * The balance of the wallet it spends while on its way (`public` STABLE, `confidential` cSTABLE), or null when it
   * spends none of the wallet's (money coming in). What is on its way is not available to spend again.
   */
  readonly spends: 'public' | 'confidential' | null;
}

/**
 * Every transaction type's words: a type without them does not compile. A TRANSFER's words here are those of one
 * sealpay sent; `typeWords` and `typeExplained` say a received one, or one sent outside sealpay, in their own words.
 */
const TYPE_WORDS: Record<TransactionType, TypeWords> = {
  FUND: {
    done: 'Test money added',
    notDone: 'Test money not added',
    underway: 'Adding test money…',
    explained: 'Test money from the sandbox faucet, paid into this wallet as public STABLE.',
    noun: 'Funding',
    // Asked for, so the service records it `out`, but its money comes in.
    flow: 'in',
    spends: null,
  },
  MINT: {
    done: 'Made private',
    notDone: 'Not made private',
    underway: 'Making private…',
    explained: 'Public STABLE turned into private (confidential) cSTABLE in the same wallet, one for one.',
    noun: 'Mint',
    flow: 'convert',
    spends: 'public',
  },
  REDEEM: {
    done: 'Made public',
    notDone: 'Not made public',
    underway: 'Making public…',
    explained: 'Private cSTABLE turned back into public STABLE in the same wallet, one for one.',
    noun: 'Redeem',
    flow: 'convert',
    spends: 'confidential',
  },
  TRANSFER: {
    done: 'Sent',
    notDone: 'Not sent',
    underway: 'Sending…',
    explained: 'Money this wallet sent to another address.',
    noun: 'Transfer',
    flow: 'out',
    spends: 'confidential',
  },
  LETTER_ESCROW: {
    done: 'Letter sent',
    notDone: 'Letter not sent',
    underway: 'Escrowing letter…',
    explained: 'The amount of a letter of value, held in escrow until someone claims it or it is voided.',
    noun: 'letter escrow',
    flow: 'out',
    spends: 'confidential',
  },
  LETTER_CLAIM: {
    done: 'Letter claimed',
    notDone: 'Letter claim not paid',
    underway: 'Claiming letter…',
    explained: 'The amount of a letter of value, paid out of escrow into this wallet when it was claimed.',
    noun: 'letter claim',
    flow: 'out',
    spends: null,
  },
  LETTER_REFUND: {
    done: 'Letter refunded',
    notDone: 'Letter refund not paid',
    underway: 'Refunding letter…',
    explained: 'The amount of a voided or expired letter, returned from escrow to the wallet that sent it.',
    noun: 'letter refund',
    flow: 'out',
    spends: null,
  },
};

/**
 * The words of a transaction's type. A receipt file may name a type this build does not know (it is shown, never
 * trusted): it gets words that say no more than "a transaction".
 */
function wordsOf(type: string): TypeWords {
  if (Object.hasOwn(TYPE_WORDS, type)) return TYPE_WORDS[type as TransactionType];
  return {
    done: 'Transaction',
    notDone: 'Not done',
    underway: 'In progress…',
    explained: '',
    noun: type.toLowerCase().replaceAll('_', ' '),
    flow: 'out',
    spends: null,
  };
}

/** Its type's name in a sentence for screen readers ("Transfer", "letter claim"). */
export function typeNoun(tx: Pick<Transaction, 'type'>): string {
  return wordsOf(tx.type).noun;
}

/**
 * Why a FAILED transaction moved nothing, as one sentence for every view of it: "This transfer was not sent:
 * nothing moved. <the reason in words>", or "This transfer failed on the chain: …" when it reached the chain.
 */
export function failedSentence(tx: Kind & Pick<Transaction, 'errorCode' | 'error'>): string {
  const what = failedOnChain(tx)
    ? `This ${wordsOf(tx.type).noun.toLowerCase()} failed on the chain`
    : tx.type === 'TRANSFER' && tx.direction !== 'in'
      ? 'This transfer was not sent'
      : wordsOf(tx.type).notDone;
  const reason = plainCode(tx.errorCode, tx.error);
  // Said once: the service's reason often says it already ("…: nothing moved", "the transfer moved nothing").
  return SAYS_NOTHING_MOVED.test(reason) ? `${what}. ${reason}` : `${what}: nothing moved. ${reason}`;
}

const SAYS_NOTHING_MOVED = /nothing moved|moved nothing/i;

/**
 * `direction: "in"` is money received (a transfer in, a letter claimed, a refund). A faucet payment is asked for,
 * so the service records it `out`, but its money comes in; mint and redeem move money between the wallet's own
 * public and confidential balances.
 */
export function flowOf(tx: Kind): Flow {
  if (failed(tx)) return 'none';
  if (underway(tx)) return 'waiting';
  if (tx.direction === 'in') return 'in';
  return wordsOf(tx.type).flow;
}

/**
 * Money that left the wallet in a transaction sealpay did not send (with an exported key, or by an external
 * wallet's owner): the chain follower saw it and recorded it so the balance still adds up.
 */
export function sentOutside(tx: Partial<Pick<Transaction, 'metadata'>>): boolean {
  return tx.metadata?.sentOutside === true;
}

/**
 * What happened, in a few plain words ("Received", "Letter claimed", "Sent outside sealpay"); a failed one as not
 * done ("Not sent"), or, when it reached the chain, as failed there ("Transfer failed"): it was sent.
 */
export function typeWords(tx: Kind): string {
  if (failedOnChain(tx)) {
    const noun = wordsOf(tx.type).noun;
    return `${noun.charAt(0).toUpperCase()}${noun.slice(1)} failed`;
  }
  if (failed(tx)) return wordsOf(tx.type).notDone;
  if (tx.type === 'TRANSFER') {
    if (tx.direction === 'in') return underway(tx) ? 'Arriving…' : 'Received';
    if (sentOutside(tx)) return underway(tx) ? 'Sending outside sealpay…' : 'Sent outside sealpay';
  }
  return underway(tx) ? wordsOf(tx.type).underway : wordsOf(tx.type).done;
}

/** Where a transaction still on its way stands, as one sentence for its details ("Not done yet: …"). */
export function underwaySentence(tx: Pick<Transaction, 'status'>): string {
  if (tx.status === 'QUEUED') return 'Not done yet: it is queued for the network, and nothing has moved.';
  if (tx.status === 'SETTLING') {
    return 'Not done yet: confirmed on the chain, and the public STABLE is being paid out to the wallet.';
  }
  return 'Not done yet: it was sent to the network and waits for confirmation; it counts once confirmed.';
}

/**
 * The balance of the wallet `tx` takes money from while it is on its way, or null: a QUEUED or PENDING outgoing
 * transfer, redeem or letter escrow (cSTABLE), or mint (STABLE) has not left the balance read from the chain yet,
 * but it will, so it is not available to spend again.
 */
export function spendingOnItsWay(tx: Kind): 'public' | 'confidential' | null {
  if ((tx.status !== 'QUEUED' && tx.status !== 'PENDING') || tx.direction === 'in') return null;
  return wordsOf(tx.type).spends;
}

/** A longer sentence for the details view. */
export function typeExplained(tx: Kind): string {
  if (failed(tx)) return 'It failed, so nothing moved: no money left or reached any wallet.';
  if (tx.type === 'TRANSFER') {
    if (tx.direction === 'in') return 'Money another address sent to this wallet.';
    if (sentOutside(tx)) {
      return (
        'Money sent outside sealpay: it left this wallet in a transaction sealpay did not send (with an exported ' +
        'key, or from the wallet app that holds its key), seen on the chain and recorded here.'
      );
    }
  }
  return wordsOf(tx.type).explained;
}

export const FLOW_ARROWS: Record<Flow, { symbol: string; words: string }> = {
  in: { symbol: '↓', words: 'Money in' },
  out: { symbol: '↑', words: 'Money out' },
  convert: { symbol: '⇄', words: 'Between your balances' },
  waiting: { symbol: '◌', words: 'Not moved yet' },
  none: { symbol: '✗', words: 'Nothing moved' },
};

/**
 * The amount with its sign for the wallet (`+12.50 cSTABLE`), or "encrypted" when only the receiver can read it; a
 * FAILED one, and one still on its way, unsigned (neither debited nor credited, or not yet).
 */
export function signedAmount(tx: Kind & Pick<Transaction, 'amount' | 'token'>): string {
  if (tx.amount === null) return `encrypted ${tx.token}`;
  const flow = flowOf(tx);
  const sign = flow === 'in' ? '+' : flow === 'out' ? '−' : '';
  return `${sign}${formatAmount(tx.amount)} ${tx.token}`;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The other side, short: "from 0x12…abcd", "to Letter escrow", or null when there is none. An address that is one
 * of the account's own wallets is said by its name (`walletAt`): "to Savings".
 */
export function partyWords(
  tx: TxFacts,
  walletAt: (address: string) => string | null = () => null,
): string | null {
  const named = (value: string | null) =>
    value && ADDRESS.test(value) ? (walletAt(value) ?? shortHex(value, 4)) : value;
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
