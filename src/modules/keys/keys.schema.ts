import { Type } from '@sinclair/typebox';
import type { ApiKeyRow } from '../../db/schema/index.ts';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/envelope.ts';
import { KEY_PERMISSIONS, SPEND_LIMIT_PERIOD } from '../../lib/key-scope.ts';
import { formatAmount } from '../../lib/money.ts';
import { iso } from '../../lib/time.ts';

const Permissions = Type.Union(
  KEY_PERMISSIONS.map((value) => Type.Literal(value)),
  {
    description:
      '`full`: everything an API key may do; `read_only`: reads only, every write is `403 insufficient_scope`',
  },
);

const SpendLimitFields = {
  amount: Type.String({
    maxLength: 64,
    description: 'Decimal string in human units, greater than zero: what the key may send in the period',
  }),
  period: Type.Literal(SPEND_LIMIT_PERIOD, { description: 'A rolling 24 hours' }),
};

/** The optional scope fields of `POST /keys`. */
export const KeyScopeFields = {
  permissions: Type.Optional(Permissions),
  walletIds: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 10,
      uniqueItems: true,
      description:
        "The account's wallets the key is bound to: it sees and acts on these alone. Absent: every wallet.",
    }),
  ),
  spendLimit: Type.Optional(
    Type.Object(SpendLimitFields, {
      description:
        'What the key may send (transfers and letters, public and confidential alike) in any 24 hours. ' +
        'Absent: no limit.',
    }),
  ),
};

export const ApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    keyPrefix: Type.String({ description: 'svc_sk_ plus the first characters of the key' }),
    permissions: Permissions,
    walletIds: Nullable(
      Type.Array(Type.String(), { description: 'The wallets the key is bound to; null: every wallet' }),
    ),
    spendLimit: Nullable(
      Type.Object(SpendLimitFields, { description: 'The rolling 24-hour spend limit; null: none' }),
    ),
    spentLast24h: Type.Optional(
      Type.String({
        description:
          'Only on a key with a spend limit: what it sent in the last 24 hours (rows that did not fail)',
      }),
    ),
    lastUsedAt: NullableTimestamp,
    expiresAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);

/** The key's record; `spent` (base units) is what it sent in the last 24 hours, shown when it has a limit. */
export function toApiKey({ key: row, spent }: { key: ApiKeyRow; spent: bigint }) {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    permissions: row.permissions,
    walletIds: row.walletIds,
    spendLimit:
      row.spendLimit === null
        ? null
        : { amount: formatAmount(BigInt(row.spendLimit)), period: SPEND_LIMIT_PERIOD },
    ...(row.spendLimit === null ? {} : { spentLast24h: formatAmount(spent) }),
    lastUsedAt: iso(row.lastUsedAt),
    expiresAt: iso(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    createdAt: iso(row.createdAt),
  };
}
