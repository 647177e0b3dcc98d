import { Type } from '@sinclair/typebox';
import type { Network } from '../../adapters/chain/types.ts';
import type { TransactionRow } from '../../db/schema/index.ts';
import {
  TRANSACTION_DIRECTIONS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from '../../db/schema/transactions.ts';
import { Nullable, Timestamp } from '../../http/envelope.ts';
import { TRANSACTION_ERROR_CODES } from '../../lib/errors.ts';
import { formatAmount, STABLE_DECIMALS } from '../../lib/money.ts';
import { iso } from '../../lib/time.ts';

export const Transaction = Type.Object(
  {
    id: Type.String(),
    type: Type.Union(
      TRANSACTION_TYPES.map((value) => Type.Literal(value)),
      {
        description:
          'Money received is recorded too: `TRANSFER` with `direction: "in"` (a confidential transfer in, token ' +
          "`cSTABLE`, or a public one, token `STABLE`), `LETTER_CLAIM` (the claimant's wallet) and `LETTER_REFUND` " +
          '(the sender\'s wallet). So is money sent outside the API: a `TRANSFER` with `direction: "out"`, ' +
          '`CONFIRMED`, `metadata.sentOutside: true`, seen on chain leaving a wallet in a transaction the service did ' +
          "not send (moved with an exported key, or by an external wallet's owner): `toAddress` and `counterparty` " +
          "the recipient, `amount` exact for `STABLE`, decrypted for a custodial wallet's `cSTABLE`, null for an " +
          "external wallet's `cSTABLE`",
      },
    ),
    direction: Type.Union(
      TRANSACTION_DIRECTIONS.map((value) => Type.Literal(value)),
      {
        description:
          '`in`: money the wallet received; `out`: money it sent or an operation it asked for, including a ' +
          '`TRANSFER` sent outside sealpay (`metadata.sentOutside`)',
      },
    ),
    status: Type.Union(TRANSACTION_STATUSES.map((value) => Type.Literal(value))),
    chainId: Type.Integer(),
    amount: Nullable(
      Type.String({
        description:
          'Decimal, human units; null for a confidential amount received or sent outside sealpay by an external ' +
          'wallet (the service holds no key to decrypt it)',
      }),
    ),
    token: Type.String(),
    txHash: Nullable(Type.String()),
    settlementTxHash: Nullable(Type.String()),
    explorerUrl: Nullable(Type.String()),
    fromAddress: Nullable(Type.String()),
    toAddress: Nullable(Type.String()),
    counterparty: Nullable(
      Type.String({ description: 'The other side: the recipient sent to, or the sender' }),
    ),
    blockNumber: Nullable(Type.Integer({ description: 'The block of the transaction, once mined' })),
    logIndex: Nullable(
      Type.Integer({ description: 'For money received: the index of its log in the block' }),
    ),
    walletId: Type.String(),
    error: Nullable(Type.String()),
    errorCode: Nullable(
      Type.Union(
        TRANSACTION_ERROR_CODES.map((value) => Type.Literal(value)),
        { description: 'Why a FAILED transaction failed; null otherwise' },
      ),
    ),
    metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Transaction' },
);

export function explorerUrlOf(
  network: Pick<Network, 'explorerBaseUrl'> | null,
  txHash: string | null,
): string | null {
  return network?.explorerBaseUrl && txHash ? `${network.explorerBaseUrl}/tx/${txHash}` : null;
}

export function toTransaction(row: TransactionRow, network: Pick<Network, 'explorerBaseUrl'> | null) {
  return {
    id: row.id,
    type: row.type,
    direction: row.direction,
    status: row.status,
    chainId: row.chainId,
    amount: row.amount === null ? null : formatAmount(BigInt(row.amount), STABLE_DECIMALS),
    token: row.token,
    txHash: row.txHash,
    settlementTxHash: row.settlementTxHash,
    explorerUrl: explorerUrlOf(network, row.txHash),
    fromAddress: row.fromAddress,
    toAddress: row.toAddress,
    counterparty: row.counterparty,
    blockNumber: row.blockNumber === null ? null : Number(row.blockNumber),
    logIndex: row.logIndex,
    walletId: row.walletId,
    error: row.status === 'FAILED' ? row.error : null,
    errorCode: row.status === 'FAILED' ? row.errorCode : null,
    metadata: row.metadata ?? null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
