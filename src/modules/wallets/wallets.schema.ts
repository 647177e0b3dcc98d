import { Type } from '@sinclair/typebox';
import type { WalletRow } from '../../db/schema/index.ts';
import { Nullable, Timestamp } from '../../http/envelope.ts';
import { iso } from '../../lib/time.ts';

export const Wallet = Type.Object(
  {
    id: Type.String(),
    address: Type.String(),
    type: Type.Union([Type.Literal('CUSTODIAL'), Type.Literal('EXTERNAL')]),
    label: Type.String(),
    isPrimary: Type.Boolean(),
    createdAt: Timestamp,
  },
  { title: 'Wallet' },
);

export function toWallet(row: WalletRow) {
  return {
    id: row.id,
    address: row.address,
    type: row.type,
    label: row.label,
    isPrimary: row.isPrimary,
    createdAt: iso(row.createdAt),
  };
}

export const Balance = Type.Object(
  {
    wallet: Wallet,
    eth: Type.Object({ amount: Type.String() }),
    normal: Type.Object({ token: Type.String(), amount: Type.String() }),
    confidential: Type.Object({
      token: Type.String(),
      amount: Nullable(Type.String()),
      encrypted: Type.Boolean(),
      handle: Type.String(),
    }),
    total: Type.Object({ amount: Type.String(), currency: Type.Literal('USD') }),
  },
  { title: 'Balance' },
);

export const GasRecord = Type.Object({
  walletId: Type.String(),
  address: Type.String(),
  eth: Type.Object({ amount: Type.String(), baseUnits: Type.String() }),
  normal: Type.Object({ token: Type.String(), amount: Type.String(), baseUnits: Type.String() }),
});

export const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EVM address' });

export const CreateWalletBody = Type.Object({
  type: Type.Union([Type.Literal('CUSTODIAL'), Type.Literal('EXTERNAL')], {
    description: 'CUSTODIAL: the service creates and holds the key. EXTERNAL: a watch-only address.',
  }),
  address: Type.Optional(Address),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

export const WalletQuery = Type.Object({
  walletId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});
