import { Type } from '@sinclair/typebox';
import type { Network } from '../../adapters/chain/types.ts';
import type { LetterRow, RecipientAddress, TransactionRow, UserRow } from '../../db/schema/index.ts';
import { LETTER_STATUSES } from '../../db/schema/letters.ts';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/envelope.ts';
import { formatAmount } from '../../lib/money.ts';
import type { Keyring } from '../../lib/secrets.ts';
import { iso } from '../../lib/time.ts';
import { explorerUrlOf } from '../transactions/transactions.schema.ts';

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** The English name of an ISO 3166-1 alpha-2 code, or null when it names no country. */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null;
  try {
    const name = regionNames.of(code);
    return name && name !== code && name !== 'Unknown Region' ? name : null;
  } catch {
    return null;
  }
}

/**
 * A letter's address as the API (and a webhook, and the print provider) shows it: every field present, `line2` and
 * `landmark` `""` when not given, `postal` null when not given (the one nullable field), and the country's name.
 */
export function addressOf(stored: RecipientAddress): RecipientAddress & {
  line2: string;
  landmark: string;
  countryName: string;
} {
  return {
    line1: stored.line1,
    line2: stored.line2 ?? '',
    landmark: stored.landmark ?? '',
    city: stored.city,
    region: stored.region,
    postal: stored.postal ?? null,
    country: stored.country,
    countryName: countryName(stored.country) ?? stored.country,
  };
}

/** The print provider mails from the United States: a US address is domestic. */
export const HOME_COUNTRY = 'US';

const Leg = {
  transactionId: Type.String(),
  txHash: Nullable(Type.String()),
  explorerUrl: Nullable(Type.String()),
  status: Type.String(),
  verified: Type.Boolean(),
};

export const Letter = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(LETTER_STATUSES.map((value) => Type.Literal(value))),
    chainId: Type.Integer(),
    amount: Type.String({ description: '"sealed" until the letter is claimed' }),
    token: Type.String(),
    amountVisibility: Type.Literal('sealed'),
    memo: Type.String({ description: '"sealed" until the letter is claimed' }),
    recipient: Type.Object({
      name: Type.String(),
      address: Type.Object(
        {
          line1: Type.String(),
          line2: Type.String({ description: '"" when not given' }),
          landmark: Type.String({ description: '"" when not given' }),
          city: Type.String(),
          region: Type.String(),
          postal: Nullable(Type.String({ description: 'null when not given (the only nullable field)' })),
          country: Type.String({ description: 'ISO 3166-1 alpha-2 code' }),
          countryName: Type.String(),
        },
        { description: 'Every field is present.' },
      ),
    }),
    isDomestic: Type.Boolean(),
    expiresAt: Timestamp,
    sender: Type.Object({ walletId: Type.String(), address: Type.String() }),
    claimCode: Nullable(
      Type.String({
        description:
          "The sender's until the claim, through a credential that may send the letter's amount or the key that " +
          'created it; null otherwise, to the claimant and in webhooks',
      }),
    ),
    claimUrl: Nullable(
      Type.String({ description: 'The claim page with the code; null whenever `claimCode` is' }),
    ),
    pdfUrl: Type.String(),
    escrow: Type.Object(Leg),
    claim: Nullable(Type.Object({ ...Leg, claimedAt: NullableTimestamp, walletAddress: Type.String() })),
    refund: Nullable(Type.Object({ ...Leg, reason: Type.String() })),
    mail: Nullable(
      Type.Object({
        provider: Type.Literal('printer'),
        providerId: Type.String(),
        deliveryMethod: Type.Union([Type.Literal('standard'), Type.Literal('tracked')]),
        status: Type.String(),
        trackingNumber: Nullable(Type.String()),
        expectedDeliveryDate: Nullable(Type.String({ format: 'date' })),
        mailedAt: Timestamp,
        testMode: Type.Boolean(),
      }),
    ),
    needsReview: Type.Boolean(),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Letter' },
);

/** How a letter names its sender to the recipient: the company, else the name. */
export function senderLabelOf(sender: Pick<UserRow, 'name' | 'company'> | undefined): string {
  return sender?.company || sender?.name || 'A sealpay user';
}

/** What anyone holding a claim code sees before claiming (`GET /transfer/letter/preview`). */
export const LetterPreview = Type.Object({
  status: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  recipientName: Type.String(),
  senderLabel: Type.String(),
  amountVisibility: Type.Literal('sealed'),
  claimable: Type.Boolean(),
});

export function memoContext(letterId: string): string {
  return `letter-memo:${letterId}`;
}

export function claimCodeContext(letterId: string): string {
  return `letter-claim-code:${letterId}`;
}

export interface LetterView {
  /**
   * Whether the claim code (and the claim URL that carries it) is shown, until the claim: only to the sender, through
   * a credential that may read it (`readableCodes`, views.service.ts); never to the claimant, nor in a webhook (sent
   * to the sender's account, but the code is a secret never copied into an event).
   */
  showClaimCode: boolean;
  apiOrigin: string;
}

function leg(row: TransactionRow | undefined, network: Pick<Network, 'explorerBaseUrl'> | null) {
  if (!row) return null;
  return {
    transactionId: row.id,
    txHash: row.txHash,
    explorerUrl: explorerUrlOf(network, row.txHash),
    status: row.status,
    verified: row.metadata?.verified === true,
  };
}

export function toLetter(
  row: LetterRow,
  legs: Map<string, TransactionRow>,
  keyring: Keyring,
  network: Pick<Network, 'explorerBaseUrl'> | null,
  view: LetterView,
) {
  const revealed = row.status === 'CLAIMED';
  const showCode = view.showClaimCode && !revealed && row.claimCodeSealed !== null;
  const claimCode = showCode
    ? keyring.openText(row.claimCodeSealed as string, claimCodeContext(row.id))
    : null;
  const memo = row.memoSealed ? keyring.openText(row.memoSealed, memoContext(row.id)) : '';
  const escrow = leg(row.escrowTransactionId ? legs.get(row.escrowTransactionId) : undefined, network);
  const claim = leg(row.claimTransactionId ? legs.get(row.claimTransactionId) : undefined, network);
  const refund = leg(row.refundTransactionId ? legs.get(row.refundTransactionId) : undefined, network);
  return {
    id: row.id,
    status: row.status,
    chainId: row.chainId,
    amount: revealed ? formatAmount(BigInt(row.amount)) : 'sealed',
    token: 'cSTABLE',
    amountVisibility: 'sealed' as const,
    memo: revealed ? memo : 'sealed',
    recipient: { name: row.recipientName, address: addressOf(row.recipientAddress) },
    isDomestic: row.recipientAddress.country === HOME_COUNTRY,
    expiresAt: iso(row.expiresAt),
    sender: { walletId: row.senderWalletId, address: row.senderAddress },
    claimCode,
    claimUrl: claimCode ? `${row.claimOrigin}/claim#${claimCode}` : null,
    pdfUrl: `${view.apiOrigin}/api/v1/transfer/letter/${row.id}/pdf`,
    escrow: escrow ?? {
      transactionId: row.escrowTransactionId ?? '',
      txHash: null,
      explorerUrl: null,
      status: 'QUEUED',
      verified: false,
    },
    claim: claim
      ? { ...claim, claimedAt: iso(row.claimedAt), walletAddress: row.claimantAddress ?? '' }
      : null,
    refund: refund ? { ...refund, reason: row.refundReason ?? 'voided' } : null,
    mail: row.mail ?? null,
    needsReview: row.needsReview,
    error: row.error,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
