/**
 * The registry as the one place a transaction type's facts live: the lists the service derives from it are those it
 * used to write by hand, and the recipe of `docs/CONVENTIONS.md` ("Adding a transaction type"), walked with a
 * throwaway `PAYOUT` type that never ships, ends in a registry the derived lists pick up — and a registry that
 * forgets the new type does not compile (`npx tsc --noEmit` checks the `@ts-expect-error` below).
 */
import { describe, expect, it } from 'vitest';
import { TRANSACTION_TYPES, type TransactionType } from './db/schema/index.ts';
import { type Operation, typesWhere } from './deps.ts';
import { operations } from './operations.ts';

describe('the operation registry', () => {
  it('has one descriptor per type, in the order of the type list', () => {
    expect(Object.keys(operations)).toEqual([...TRANSACTION_TYPES]);
  });

  it('derives the per-type lists the service once wrote by hand', () => {
    expect(typesWhere(operations, (operation) => operation.creditsWallet)).toEqual(['MINT', 'LETTER_CLAIM']);
    expect(typesWhere(operations, (operation) => operation.direction === 'in')).toEqual([
      'LETTER_CLAIM',
      'LETTER_REFUND',
    ]);
    expect(typesWhere(operations, (operation) => operation.spendsKeyLimit)).toEqual([
      'TRANSFER',
      'LETTER_ESCROW',
    ]);
    const routes = Object.fromEntries(
      typesWhere(operations, (operation) => operation.queue !== undefined).map((type) => [
        type,
        operations[type].queue?.path,
      ]),
    );
    expect(routes).toEqual({ FUND: '/fund', MINT: '/mint', TRANSFER: '/transfer', REDEEM: '/redeem' });
    // Only the mint is refused up front on a balance; the others are judged by the worker.
    expect(typesWhere(operations, (operation) => operation.queue?.check !== undefined)).toEqual(['MINT']);
  });

  it('gives each type its own failure code', () => {
    const codes = Object.values<Operation>(operations).map((operation) => operation.failureCode);
    expect(new Set(codes).size).toBe(codes.length);
  });
});

describe('adding a type (the recipe, walked with a throwaway PAYOUT)', () => {
  type WithPayout = TransactionType | 'PAYOUT';
  const payout: Operation = {
    token: 'cSTABLE',
    // A real walk adds `payout_failed` to TRANSACTION_ERROR_CODES (and its words to the web's PLAIN table).
    failureCode: 'transfer_failed',
    direction: 'out',
    creditsWallet: false,
    spendsKeyLimit: true,
    letterLeg: false,
    queue: { path: '/payout' },
    run: async () => {
      throw new Error('a throwaway type: never run');
    },
  };
  const registry: Readonly<Record<WithPayout, Operation>> = { ...operations, PAYOUT: payout };

  it('is picked up by every derived list from its descriptor alone', () => {
    expect(typesWhere(registry, (operation) => operation.spendsKeyLimit)).toEqual([
      'TRANSFER',
      'LETTER_ESCROW',
      'PAYOUT',
    ]);
    expect(typesWhere(registry, (operation) => operation.queue !== undefined)).toContain('PAYOUT');
    expect(typesWhere(registry, (operation) => operation.creditsWallet)).toEqual(['MINT', 'LETTER_CLAIM']);
    expect(typesWhere(registry, (operation) => operation.direction === 'in')).not.toContain('PAYOUT');
  });

  it('cannot be forgotten in the registry', () => {
    // @ts-expect-error a registry without the new type's descriptor does not compile
    const forgotten: Readonly<Record<WithPayout, Operation>> = { ...operations };
    expect(Object.keys(forgotten)).not.toContain('PAYOUT');
  });
});
