import { sql } from 'drizzle-orm';
import { bigint, boolean, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import type { Address } from 'viem';
import { users } from './accounts.ts';
import { createdAt } from './columns.ts';

export const wallets = pgTable(
  'wallets',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    /** Checksummed address; unique across the whole deployment (`409 wallet_exists`). */
    address: text('address').$type<Address>().notNull(),
    type: text('type', { enum: ['CUSTODIAL', 'EXTERNAL'] }).notNull(),
    label: text('label').notNull(),
    isPrimary: boolean('is_primary').notNull().default(false),
    /** Custodial key sealed with the keyring (AES-256-GCM, key id inside); null for external wallets. */
    sealedPrivateKey: text('sealed_private_key'),
    /**
     * Until when (unix seconds) the TransferBatcher is this custodial wallet's ERC-7984 operator, as the wallet's
     * own `setOperator(batcher, until)` set it; null until the first batched transfer sends the grant.
     */
    batcherOperatorUntil: bigint('batcher_operator_until', { mode: 'number' }),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('wallets_address_key').on(sql`lower(${t.address})`),
    index('wallets_user_idx').on(t.userId),
    uniqueIndex('wallets_one_primary_key').on(t.userId).where(sql`${t.isPrimary}`),
  ],
);

export type WalletRow = typeof wallets.$inferSelect;
export type NewWallet = typeof wallets.$inferInsert;
