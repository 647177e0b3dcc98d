/**
 * The resources of the API as `@sealpay/client` types them: generated from the service's OpenAPI document, so the
 * app cannot drift from what the service sends. Type-only imports (nothing of them is bundled). Amounts are
 * decimal strings.
 */
import type { DataOf, Letter } from '../../clients/typescript/src/index.ts';

export type {
  ApiKey as ApiKeyRecord,
  Balance,
  Letter,
  LetterStatus,
  Passkey as PasskeyRecord,
  Transaction,
  User,
  Wallet,
} from '../../clients/typescript/src/index.ts';

export type GasRecord = DataOf<'/gas', 'get'>['wallets'][number];
export type Leg = Letter['escrow'];
export type LetterPreview = DataOf<'/transfer/letter/preview', 'get'>['letter'];
export type NetworkInfo = DataOf<'/network', 'get'>;

/** A page of a list (`GET /transactions`, `GET /transfer/letter`) holding `T`s. */
export type Page<T> = Omit<DataOf<'/transactions', 'get'>, 'items'> & { items: T[] };

export const IN_FLIGHT: readonly string[] = ['QUEUED', 'PENDING', 'SETTLING'];
