/** Decryption requests are cut under the relayer's 2,048-bit limit, by each handle's FHE type, in order. */
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { decryptionChunks, encryptedBits, MAX_DECRYPTION_BITS } from './decryption-chunks.ts';

/** A handle of FHE type `typeId` (byte 30), version 0 (byte 31), told apart by its first bytes. */
function handleOf(typeId: number, serial: number): Hex {
  return `0x${serial.toString(16).padStart(60, '0')}${typeId.toString(16).padStart(2, '0')}00`;
}

describe('decryption chunks', () => {
  it('counts each handle by its type: ebool 2, euint64 64, eaddress 160, euint256 256 bits', () => {
    expect([0, 5, 7, 8].map((type) => encryptedBits(handleOf(type, 1)))).toEqual([2, 64, 160, 256]);
    expect(() => encryptedBits(handleOf(1, 1))).toThrow(/not a decryptable FHE handle/);
    expect(() => encryptedBits('0x1234')).toThrow(/not a decryptable FHE handle/);
  });

  it('keeps 32 amounts in one request and puts the 33rd in a second', () => {
    const amounts = Array.from({ length: 33 }, (_, serial) => handleOf(5, serial));
    expect(decryptionChunks(amounts.slice(0, 32), (h) => h)).toHaveLength(1);
    expect(decryptionChunks(amounts, (h) => h).map((chunk) => chunk.length)).toEqual([32, 1]);
  });

  it('cuts 1,000 handles of mixed types into requests of at most 2,048 bits, in their order', () => {
    const types = [5, 0, 7, 8, 5, 2, 4];
    const handles = Array.from({ length: 1000 }, (_, serial) =>
      handleOf(types[serial % types.length] ?? 5, serial),
    );
    const chunks = decryptionChunks(handles, (h) => h);
    expect(chunks.flat()).toEqual(handles);
    for (const chunk of chunks) {
      expect(chunk.reduce((bits, handle) => bits + encryptedBits(handle), 0)).toBeLessThanOrEqual(
        MAX_DECRYPTION_BITS,
      );
    }
    // Full requests: each chunk but the last would pass the limit with the next handle.
    for (const [index, chunk] of chunks.slice(0, -1).entries()) {
      const next = chunks[index + 1]?.[0] as Hex;
      const bits = chunk.reduce((total, handle) => total + encryptedBits(handle), 0);
      expect(bits + encryptedBits(next)).toBeGreaterThan(MAX_DECRYPTION_BITS);
    }
  });
});
