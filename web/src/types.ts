/** The resources of the interface document, as this app reads them. Amounts are decimal strings. */

export interface User {
  id: string;
  email: string;
  name: string | null;
  company: string | null;
  mustChangePassword: boolean;
  totpEnabled: boolean;
  lastLoginAt: string | null;
  createdAt: string;
}

export interface Wallet {
  id: string;
  address: string;
  type: 'CUSTODIAL' | 'EXTERNAL';
  label: string;
  isPrimary: boolean;
  createdAt: string;
}

export interface GasRecord {
  walletId: string;
  address: string;
  eth: { amount: string; baseUnits: string };
  normal: { token: string; amount: string; baseUnits: string };
}

export interface Balance {
  wallet: Wallet;
  eth: { amount: string };
  normal: { token: string; amount: string };
  confidential: { token: string; amount: string | null; encrypted: boolean; handle: string };
  total: { amount: string; currency: string };
}

export type TransactionStatus = 'QUEUED' | 'PENDING' | 'SETTLING' | 'CONFIRMED' | 'SETTLED' | 'FAILED';

export interface Transaction {
  id: string;
  type: string;
  status: TransactionStatus;
  chainId: number;
  amount: string;
  token: string;
  txHash: string | null;
  settlementTxHash: string | null;
  explorerUrl: string | null;
  fromAddress: string | null;
  toAddress: string | null;
  counterparty: string | null;
  walletId: string;
  error: string | null;
  errorCode: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
}

export interface Leg {
  transactionId: string;
  txHash: string | null;
  explorerUrl: string | null;
  status: string;
  verified: boolean;
}

export interface MailBlock {
  provider: string;
  providerId: string;
  deliveryMethod: 'standard' | 'tracked';
  status: string;
  trackingNumber: string | null;
  expectedDeliveryDate: string | null;
  mailedAt: string;
  testMode: boolean;
}

export interface Letter {
  id: string;
  status: string;
  chainId: number;
  amount: string;
  token: string;
  amountVisibility: 'sealed';
  memo: string;
  recipient: {
    name: string;
    address: {
      line1: string;
      line2: string | null;
      landmark: string | null;
      city: string;
      region: string;
      postal: string | null;
      country: string;
      countryName: string;
    };
  };
  isDomestic: boolean;
  expiresAt: string;
  sender: { walletId: string; address: string };
  claimCode: string | null;
  claimUrl: string | null;
  pdfUrl: string;
  escrow: Leg;
  claim: (Leg & { claimedAt: string | null; walletAddress: string }) | null;
  refund: (Leg & { reason: string }) | null;
  mail: MailBlock | null;
  needsReview: boolean;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface LetterPreview {
  status: string;
  expiresAt: string;
  recipientName: string;
  senderLabel: string;
  amountVisibility: 'sealed';
  claimable: boolean;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  keyPrefix: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface PasskeyRecord {
  id: string;
  deviceName: string | null;
  transports: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface NetworkInfo {
  network: string;
  environment: string;
  chainId: number;
  rpcUrl: string | null;
  explorerBaseUrl: string | null;
  confidentiality: 'fhe' | 'mock' | string;
}

export const IN_FLIGHT: readonly string[] = ['QUEUED', 'PENDING', 'SETTLING'];
