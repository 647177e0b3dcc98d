import { describe, expect, it } from 'vitest';
import { type Recorded, unproducedCodes } from './gaps.ts';

/** One operation as the document shows it: a keyed write with a wallet id in its path and two codes of its own. */
const DOCUMENT: Parameters<typeof unproducedCodes>[0] = {
  paths: {
    '/wallets/{id}/thing': {
      post: {
        operationId: 'doThing',
        security: [{ apiKey: [] }, { session: [] }],
        responses: {
          '400': { 'x-error-codes': ['invalid_json', 'invalid_amount', 'validation_error'] },
          '401': { 'x-error-codes': ['unauthenticated'] },
          '404': { 'x-error-codes': ['not_found'] },
          '409': { 'x-error-codes': ['idempotency_conflict'] },
          '500': { 'x-error-codes': ['internal_error'] },
        },
      },
    },
  },
};

const answer = (code: string, status: number, source = '/repo/src/thing.test.ts'): Recorded => ({
  operationId: 'doThing',
  status,
  code,
  source,
});

describe('documented codes against produced ones', () => {
  it('names a declared code no test produced; the codes every route of its kind answers are derived', () => {
    expect(unproducedCodes(DOCUMENT, [answer('invalid_amount', 400)])).toEqual([
      'doThing 409 idempotency_conflict',
    ]);
  });

  it("does not count the fuzzer's answers as producing a code", () => {
    const fuzzed = '/repo/test/hardening/fuzz.test.ts';
    expect(
      unproducedCodes(DOCUMENT, [answer('invalid_amount', 400), answer('idempotency_conflict', 409, fuzzed)]),
    ).toEqual(['doThing 409 idempotency_conflict']);
  });

  it('is clean when each declared code was answered', () => {
    expect(
      unproducedCodes(DOCUMENT, [
        answer('invalid_amount', 400),
        answer('idempotency_conflict', 409),
        answer('not_found', 404),
      ]),
    ).toEqual([]);
  });
});
