/** The fee policy and the reading of price refusals (`src/adapters/chain/tx.ts`). */
import { InvalidInputRpcError, RpcRequestError, TransactionRejectedRpcError } from 'viem';
import { describe, expect, it } from 'vitest';
import { bumped, initialFees, isPriceRefusal, replacementFees } from './tx.ts';

const GWEI = 1_000_000_000n;
const policy = { multiplierPercent: 200n, maxFeePerGas: 100n * GWEI };

/** A JSON-RPC error as viem raises it from `sendRawTransaction` over HTTP. */
function nodeError(code: number, message: string) {
  const request = new RpcRequestError({ body: {}, url: 'http://node', error: { code, message } });
  return code === -32003 ? new TransactionRejectedRpcError(request) : new InvalidInputRpcError(request);
}

describe('the fee policy', () => {
  it('signs at the base fee × the multiplier plus the tip, capped', () => {
    expect(initialFees({ baseFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }, policy)).toEqual({
      maxFeePerGas: 21n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    expect(initialFees({ baseFeePerGas: 80n * GWEI, maxPriorityFeePerGas: GWEI }, policy)).toEqual({
      maxFeePerGas: 100n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
  });

  it('replaces with both fees +12.5 % at least, and the max fee at least what the policy asks now', () => {
    const previous = { maxFeePerGas: 21n * GWEI, maxPriorityFeePerGas: GWEI };
    const calm = replacementFees(previous, { baseFeePerGas: GWEI, maxPriorityFeePerGas: GWEI }, policy);
    expect(calm).toEqual({ maxFeePerGas: bumped(21n * GWEI), maxPriorityFeePerGas: bumped(GWEI) });
    expect((calm?.maxFeePerGas ?? 0n) * 1000n).toBeGreaterThanOrEqual(21n * GWEI * 1125n);
    const spike = replacementFees(
      previous,
      { baseFeePerGas: 30n * GWEI, maxPriorityFeePerGas: GWEI },
      policy,
    );
    expect(spike?.maxFeePerGas).toBe(60n * GWEI + bumped(GWEI));
    // Refused for its price: at least doubled.
    const refused = replacementFees(previous, { baseFeePerGas: GWEI, maxPriorityFeePerGas: GWEI }, policy, {
      refused: true,
    });
    expect(refused?.maxFeePerGas).toBe(42n * GWEI);
  });

  it('stops at the cap: a replacement that cannot rise by 12.5 % under it is not signed', () => {
    const quote = { baseFeePerGas: 500n * GWEI, maxPriorityFeePerGas: GWEI };
    expect(replacementFees({ maxFeePerGas: 80n * GWEI, maxPriorityFeePerGas: GWEI }, quote, policy)).toEqual({
      maxFeePerGas: 100n * GWEI,
      maxPriorityFeePerGas: bumped(GWEI),
    });
    expect(
      replacementFees({ maxFeePerGas: 95n * GWEI, maxPriorityFeePerGas: GWEI }, quote, policy),
    ).toBeNull();
  });

  it('raises even a zero tip', () => {
    expect(bumped(0n)).toBe(1n);
    expect(bumped(8n)).toBe(9n);
    expect(bumped(1000n)).toBe(1125n);
  });
});

describe('a refusal for the price alone', () => {
  it.each([
    [-32003, 'max fee per gas less than block base fee'],
    [-32000, 'transaction underpriced'],
    [-32000, 'replacement transaction underpriced'],
    [-32000, 'fee cap less than block base fee'],
    [-32000, 'transaction underpriced: tip needed 1, tip permitted 0'],
    [-32010, 'FeeTooLow, MaxFeePerGas too low'],
    [-32000, 'Transaction pricing is too low'],
  ])('is read from what the node said (%s %s)', (code, message) => {
    expect(isPriceRefusal(nodeError(code, message))).toBe(true);
  });

  it.each([
    [-32000, 'nonce too low'],
    [-32003, 'insufficient funds for gas * price + value'],
    [-32000, 'intrinsic gas too low'],
    [-32000, 'invalid sender'],
  ])('is not any other refusal (%s %s)', (code, message) => {
    expect(isPriceRefusal(nodeError(code, message))).toBe(false);
  });

  it('is not a transport failure', () => {
    expect(isPriceRefusal(new Error('fetch failed'))).toBe(false);
  });
});
