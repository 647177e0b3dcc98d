/**
 * The resources of the API, as the server's own response schemas define them: type-only imports of the TypeBox
 * schemas (Vite strips them; nothing of the server is bundled), so the app cannot drift from what the service sends.
 * Amounts are decimal strings.
 */
import type { Static } from '@sinclair/typebox';
import type { PageOf } from '../../src/http/envelope.ts';
import type { User as UserSchema } from '../../src/modules/accounts/accounts.schema.ts';
import type { ApiKey } from '../../src/modules/keys/keys.schema.ts';
import type {
  LetterPreview as LetterPreviewSchema,
  Letter as LetterSchema,
} from '../../src/modules/letters/letters.schema.ts';
import type { NetworkInfo as NetworkInfoSchema } from '../../src/modules/network/network.schema.ts';
import type { Passkey } from '../../src/modules/security/security.schema.ts';
import type { Transaction as TransactionSchema } from '../../src/modules/transactions/transactions.schema.ts';
import type {
  Balance as BalanceSchema,
  GasRecord as GasRecordSchema,
  Wallet as WalletSchema,
} from '../../src/modules/wallets/wallets.schema.ts';

export type User = Static<typeof UserSchema>;
export type Wallet = Static<typeof WalletSchema>;
export type GasRecord = Static<typeof GasRecordSchema>;
export type Balance = Static<typeof BalanceSchema>;
export type Transaction = Static<typeof TransactionSchema>;
export type Letter = Static<typeof LetterSchema>;
export type LetterStatus = Letter['status'];
export type Leg = Letter['escrow'];
export type LetterPreview = Static<typeof LetterPreviewSchema>;
export type ApiKeyRecord = Static<typeof ApiKey>;
export type PasskeyRecord = Static<typeof Passkey>;
export type NetworkInfo = Static<typeof NetworkInfoSchema>;

/** A page of a list (`PageOf` on the server) holding `T`s. */
export type Page<T> = Omit<Static<ReturnType<typeof PageOf>>, 'items'> & { items: T[] };

export const IN_FLIGHT: readonly string[] = ['QUEUED', 'PENDING', 'SETTLING'];
