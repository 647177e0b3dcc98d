/**
 * The relayer's limit on one decryption request: at most 2,048 encrypted bits (32 euint64 amounts), counted by
 * each handle's FHE type as the relayer SDK (and the mock) count them, which refuse a request over it whole. Every
 * request that decrypts several handles is cut into chunks under it here.
 */
import type { Hex } from 'viem';

/** Encrypted bits one request may carry (the relayer SDK's `check2048EncryptedBits`). */
export const MAX_DECRYPTION_BITS = 2048;

/** Encrypted bits of a handle by its FHE type id (byte 30 of the handle), as the relayer SDK counts them. */
const ENCRYPTED_BITS: Readonly<Record<number, number>> = {
  0: 2, // ebool
  2: 8, // euint8
  3: 16, // euint16
  4: 32, // euint32
  5: 64, // euint64
  6: 128, // euint128
  7: 160, // eaddress
  8: 256, // euint256
};

/** The encrypted bits a handle counts for in a decryption request. */
export function encryptedBits(handle: Hex): number {
  const typeId = Number.parseInt(handle.slice(-4, -2), 16);
  const bits = ENCRYPTED_BITS[typeId];
  if (handle.length !== 66 || bits === undefined)
    throw new Error(`${handle} is not a decryptable FHE handle`);
  return bits;
}

/** `items` in order, cut into runs whose handles together carry at most `MAX_DECRYPTION_BITS`. */
export function decryptionChunks<T>(items: readonly T[], handleOf: (item: T) => Hex): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bits = 0;
  for (const item of items) {
    const size = encryptedBits(handleOf(item));
    if (current.length > 0 && bits + size > MAX_DECRYPTION_BITS) {
      chunks.push(current);
      current = [];
      bits = 0;
    }
    current.push(item);
    bits += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
