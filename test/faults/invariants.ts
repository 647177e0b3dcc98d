/**
 * The money invariants both fault tests assert, from what the API and the chain say:
 * every transaction terminal; the chain's events are exactly what the transactions say (no transfer, wrap or faucet
 * mint sent twice, none sent for a FAILED row except a silent zero); the chain's balances equal the sums of what is
 * CONFIRMED.
 */
import {
  type Address,
  erc20Abi,
  getAddress,
  type Hex,
  isAddressEqual,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import { confidentialTokenAbi } from '../../src/adapters/chain/contracts.ts';
import { parseAmount } from '../../src/lib/money.ts';

export interface TxView {
  id: string;
  type: string;
  status: string;
  amount: string;
  walletId: string;
  txHash: string | null;
  settlementTxHash?: string | null;
  errorCode: string | null;
  fromAddress: string | null;
  toAddress: string | null;
  /** `in` for money a wallet received (recorded by the chain follower); absent or `out` otherwise. */
  direction?: string;
  /** The log of the chain transaction this row is (a receipt; a leg of a batched transfer). */
  logIndex?: number | null;
}

export interface WalletInfo {
  id: string;
  address: string;
}

export interface RawLog {
  address: Hex;
  topics: [Hex, ...Hex[]];
  data: Hex;
  transactionHash: Hex;
  blockNumber: Hex | bigint;
  logIndex: Hex | number;
}

export interface ChainView {
  contracts: { stablecoin: Address; confidentialToken: Address };
  /** Every log of the two tokens from `fromBlock` on. */
  logs(fromBlock: bigint): Promise<RawLog[]>;
  publicBalance(address: Address): Promise<bigint>;
  /** The receipt status of a mined transaction; null when the chain has no receipt. */
  receiptStatus(hash: Hex): Promise<'success' | 'reverted' | null>;
  /** The decrypted confidential balance of a custodial wallet (base units). */
  confidentialBalance(wallet: WalletInfo): Promise<bigint>;
}

export interface InvariantReport {
  problems: string[];
  counts: Record<string, number>;
}

const units = (amount: string) => parseAmount(amount);
const lower = (hash: string | null | undefined) => (hash ? hash.toLowerCase() : null);

function sameSet(what: string, actual: string[], expected: string[], problems: string[]): void {
  const a = [...actual].sort();
  const e = [...expected].sort();
  if (a.length !== e.length || a.some((value, i) => value !== e[i])) {
    const extra = a.filter((value) => !e.includes(value));
    const missing = e.filter((value) => !a.includes(value));
    problems.push(
      `${what}: chain has ${a.length}, transactions say ${e.length}; on chain only ${JSON.stringify(extra)}, missing ${JSON.stringify(missing)}` +
        (new Set(a).size !== a.length ? ' (duplicates on chain)' : ''),
    );
  }
}

/**
 * Checks every transaction of the test (all terminal), then, per custodial wallet, that the chain's faucet mints,
 * wraps and confidential transfers are exactly the CONFIRMED ones (plus FAILED silent zeros for transfers), and
 * that public and confidential balances equal the sums the transactions give.
 */
export async function checkInvariants(params: {
  chain: ChainView;
  fromBlock: bigint;
  transactions: TxView[];
  wallets: WalletInfo[];
  /** Addresses that receive but never send (watch-only): only their incoming transfers are checked. */
  receivers?: Address[];
  /**
   * The letter vault, when letters were sent: an escrow is a confidential transfer from the wallet to the vault, a
   * claim or refund one from the vault to the wallet, and balances count them.
   */
  letterVault?: Address;
}): Promise<InvariantReport> {
  const problems: string[] = [];
  const { chain } = params;
  // Money received is the other side of a transfer sent: the checks below are of what was sent; what was received
  // is checked against it at the end.
  const isReceipt = (t: TxView) => t.type === 'TRANSFER' && t.direction === 'in';
  const receipts = params.transactions.filter(isReceipt);
  const transactions = params.transactions.filter((t) => !isReceipt(t));
  for (const t of transactions) {
    if (!['CONFIRMED', 'SETTLED', 'FAILED'].includes(t.status))
      problems.push(`${t.type} ${t.id} is ${t.status}`);
    if (t.status === 'FAILED' && t.txHash && !['TRANSFER', 'REDEEM'].includes(t.type)) {
      // A FAILED fund or mint may name the step that reverted (a revert moves nothing), never one that landed.
      const status = await chain.receiptStatus(t.txHash as Hex);
      if (status !== 'reverted') problems.push(`FAILED ${t.type} ${t.id}: its ${t.txHash} is ${status}`);
    }
  }
  const logs = await chain.logs(params.fromBlock);
  const stableLogs = parseEventLogs({
    abi: erc20Abi,
    eventName: 'Transfer',
    logs: logs.filter((l) => isAddressEqual(l.address, chain.contracts.stablecoin)) as never,
  });
  const confidentialLogs = parseEventLogs({
    abi: confidentialTokenAbi,
    eventName: 'ConfidentialTransfer',
    logs: logs.filter((l) => isAddressEqual(l.address, chain.contracts.confidentialToken)) as never,
  });
  const byWallet = new Map(params.wallets.map((w) => [w.id, w]));
  const custodial = new Set(params.wallets.map((w) => getAddress(w.address)));
  const confirmedIn = new Map<string, bigint>();
  for (const t of transactions) {
    if (t.type === 'TRANSFER' && t.status === 'CONFIRMED' && t.toAddress) {
      const to = getAddress(t.toAddress);
      confirmedIn.set(to, (confirmedIn.get(to) ?? 0n) + units(t.amount));
    }
  }
  const counts: Record<string, number> = { transactions: transactions.length, failedSilentZero: 0 };
  for (const t of transactions) counts[`${t.type}_${t.status}`] = (counts[`${t.type}_${t.status}`] ?? 0) + 1;

  for (const wallet of params.wallets) {
    const address = getAddress(wallet.address);
    const mine = transactions.filter((t) => byWallet.get(t.walletId)?.id === wallet.id);
    const of = (type: string, status: string) => mine.filter((t) => t.type === type && t.status === status);

    // Faucet: the operator's stablecoin mints to this wallet are exactly the CONFIRMED funds.
    const funds = stableLogs.filter((l) => l.args.from === zeroAddress && isAddressEqual(l.args.to, address));
    sameSet(
      `faucet mints to ${address}`,
      funds.map((l) => l.transactionHash.toLowerCase()),
      of('FUND', 'CONFIRMED').map((t) => lower(t.txHash) as string),
      problems,
    );
    // Mint (wrap): the confidential mints to this wallet are exactly the CONFIRMED mints.
    const wraps = confidentialLogs.filter(
      (l) => l.args.from === zeroAddress && isAddressEqual(l.args.to, address),
    );
    sameSet(
      `wraps to ${address}`,
      wraps.map((l) => l.transactionHash.toLowerCase()),
      of('MINT', 'CONFIRMED').map((t) => lower(t.txHash) as string),
      problems,
    );
    // Transfers: every ConfidentialTransfer from the wallet is a CONFIRMED transfer or a FAILED silent zero, or a
    // letter's escrow into the vault (CONFIRMED, or FAILED having moved an encrypted zero).
    const vault = params.letterVault;
    const sent = confidentialLogs.filter(
      (l) => isAddressEqual(l.args.from, address) && l.args.to !== zeroAddress,
    );
    const silentZeros = [...of('TRANSFER', 'FAILED'), ...of('LETTER_ESCROW', 'FAILED')].filter(
      (t) => t.txHash,
    );
    counts.failedSilentZero = (counts.failedSilentZero ?? 0) + silentZeros.length;
    sameSet(
      `confidential transfers from ${address}`,
      sent.map((l) => l.transactionHash.toLowerCase()),
      [...of('TRANSFER', 'CONFIRMED'), ...of('LETTER_ESCROW', 'CONFIRMED'), ...silentZeros].map(
        (t) => lower(t.txHash) as string,
      ),
      problems,
    );
    if (vault) {
      // An escrow (transfer-and-call) also carries the vault's hand-back of what it did not accept, an encrypted
      // zero, to the sender: that is part of the escrow's transaction, not a claim or a refund.
      const escrows = new Set(
        [...of('LETTER_ESCROW', 'CONFIRMED'), ...of('LETTER_ESCROW', 'FAILED')].map((t) => lower(t.txHash)),
      );
      const fromVault = confidentialLogs.filter(
        (l) =>
          isAddressEqual(l.args.from, vault) &&
          isAddressEqual(l.args.to, address) &&
          !escrows.has(l.transactionHash.toLowerCase()),
      );
      sameSet(
        `letter claims and refunds to ${address}`,
        fromVault.map((l) => l.transactionHash.toLowerCase()),
        [...of('LETTER_CLAIM', 'CONFIRMED'), ...of('LETTER_REFUND', 'CONFIRMED')].map(
          (t) => lower(t.txHash) as string,
        ),
        problems,
      );
    }

    // Redeem: the burns (unwrap) from the wallet are the SETTLED redeems and the FAILED ones that burnt an encrypted
    // zero; the payouts (finalizeUnwrap) to it are exactly the SETTLED ones.
    const burns = confidentialLogs.filter(
      (l) => isAddressEqual(l.args.from, address) && l.args.to === zeroAddress,
    );
    sameSet(
      `unwraps from ${address}`,
      burns.map((l) => l.transactionHash.toLowerCase()),
      [...of('REDEEM', 'SETTLED'), ...of('REDEEM', 'FAILED').filter((t) => t.txHash)].map(
        (t) => lower(t.txHash) as string,
      ),
      problems,
    );
    const payouts = stableLogs.filter(
      (l) =>
        isAddressEqual(l.args.from, chain.contracts.confidentialToken) && isAddressEqual(l.args.to, address),
    );
    sameSet(
      `redeem payouts to ${address}`,
      payouts.map((l) => l.transactionHash.toLowerCase()),
      of('REDEEM', 'SETTLED').map((t) => lower(t.settlementTxHash) as string),
      problems,
    );

    // Balances.
    const sum = (list: TxView[]) => list.reduce((total, t) => total + units(t.amount), 0n);
    const expectedPublic =
      sum(of('FUND', 'CONFIRMED')) - sum(of('MINT', 'CONFIRMED')) + sum(of('REDEEM', 'SETTLED'));
    const publicBalance = await chain.publicBalance(address);
    if (publicBalance !== expectedPublic) {
      problems.push(`public balance of ${address}: chain ${publicBalance}, transactions ${expectedPublic}`);
    }
    const expectedConfidential =
      sum(of('MINT', 'CONFIRMED')) -
      sum(of('TRANSFER', 'CONFIRMED')) -
      sum(of('REDEEM', 'SETTLED')) +
      (confirmedIn.get(address) ?? 0n) -
      sum(of('LETTER_ESCROW', 'CONFIRMED')) +
      sum(of('LETTER_CLAIM', 'CONFIRMED')) +
      sum(of('LETTER_REFUND', 'CONFIRMED'));
    const confidentialBalance = await chain.confidentialBalance(wallet);
    if (confidentialBalance !== expectedConfidential) {
      problems.push(
        `confidential balance of ${address}: chain ${confidentialBalance}, transactions ${expectedConfidential}`,
      );
    }
  }
  for (const receiver of params.receivers ?? []) {
    const address = getAddress(receiver);
    if (custodial.has(address)) continue;
    const received = confidentialLogs.filter((l) => isAddressEqual(l.args.to, address));
    const expected = transactions.filter(
      (t) =>
        t.type === 'TRANSFER' &&
        t.toAddress &&
        isAddressEqual(t.toAddress as Address, address) &&
        (t.status === 'CONFIRMED' || (t.status === 'FAILED' && t.txHash)),
    );
    sameSet(
      `confidential transfers to ${address}`,
      received.map((l) => l.transactionHash.toLowerCase()),
      expected.map((t) => lower(t.txHash) as string),
      problems,
    );
  }
  // Each receipt is one transfer sent to that wallet and CONFIRMED, recorded once, for its amount. (The follower
  // may not have read the last blocks yet: receipts are checked to be right, not to be all there.)
  // A batched transfer's legs share one chain transaction: a receipt is matched by hash, recipient, amount and, where
  // the sent row knows it (a leg), its log.
  const sentByHash = new Map<string, TxView[]>();
  for (const t of transactions) {
    if (t.type !== 'TRANSFER' || t.status !== 'CONFIRMED' || !t.txHash || t.direction === 'in') continue;
    const hash = lower(t.txHash) as string;
    sentByHash.set(hash, [...(sentByHash.get(hash) ?? []), t]);
  }
  const seenReceipts = new Set<string>();
  for (const receipt of receipts) {
    const key = `${lower(receipt.txHash)}:${receipt.logIndex ?? '?'}:${receipt.walletId}`;
    if (seenReceipts.has(key)) problems.push(`receipt ${key} recorded twice`);
    seenReceipts.add(key);
    const wallet = params.wallets.find((w) => w.id === receipt.walletId);
    const sent = (sentByHash.get(lower(receipt.txHash) as string) ?? []).find(
      (t) =>
        wallet &&
        t.toAddress &&
        isAddressEqual(t.toAddress as Address, wallet.address as Address) &&
        (t.logIndex == null || t.logIndex === receipt.logIndex) &&
        // An external wallet's receipt has no amount (null): the service cannot decrypt it.
        (receipt.amount === null || units(t.amount) === units(receipt.amount)),
    );
    if (!sent) {
      problems.push(`receipt ${receipt.id} (${receipt.txHash}) matches no confirmed transfer to its wallet`);
    }
  }
  counts.receipts = receipts.length;
  return { problems, counts };
}

/** A seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded PRNG with the two draws the fault and scale-out runs make: an element of a list, a 2-decimal amount. */
export function seededDraws(seed: number) {
  const random = seededRandom(seed);
  return {
    random,
    pick: <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T,
    amount: (min: number, max: number) => (min + random() * (max - min)).toFixed(2),
  };
}
