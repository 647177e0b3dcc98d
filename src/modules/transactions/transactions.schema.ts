import { Type } from '@sinclair/typebox';
import type { Network } from '../../adapters/chain/types.ts';
import type { TransactionRow } from '../../db/schema/index.ts';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../db/schema/transactions.ts';
import { Nullable, Timestamp } from '../../http/envelope.ts';
import { TRANSACTION_ERROR_CODES } from '../../lib/errors.ts';
import { formatAmount, STABLE_DECIMALS } from '../../lib/money.ts';
import { iso } from '../../lib/time.ts';

export const Transaction = Type.Object(
  {
    id: Type.String(),
    type: Type.Union(TRANSACTION_TYPES.map((value) => Type.Literal(value))),
    status: Type.Union(TRANSACTION_STATUSES.map((value) => Type.Literal(value))),
    chainId: Type.Integer(),
    amount: Type.String({ description: 'Decimal, human units' }),
    token: Type.String(),
    txHash: Nullable(Type.String()),
    settlementTxHash: Nullable(Type.String()),
    explorerUrl: Nullable(Type.String()),
    fromAddress: Nullable(Type.String()),
    toAddress: Nullable(Type.String()),
    counterparty: Nullable(Type.String()),
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
    status: row.status,
    chainId: row.chainId,
    amount: formatAmount(BigInt(row.amount), STABLE_DECIMALS),
    token: row.token,
    txHash: row.txHash,
    settlementTxHash: row.settlementTxHash,
    explorerUrl: explorerUrlOf(network, row.txHash),
    fromAddress: row.fromAddress,
    toAddress: row.toAddress,
    counterparty: row.counterparty,
    walletId: row.walletId,
    error: row.status === 'FAILED' ? row.error : null,
    errorCode: row.status === 'FAILED' ? row.errorCode : null,
    metadata: row.metadata ?? null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
