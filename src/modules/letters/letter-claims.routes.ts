import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalKey, principalOf } from '../../http/auth.ts';
import { ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { MONEY_CONFIGURATION_ERRORS } from '../network/network.service.ts';
import { Transaction, toTransaction } from '../transactions/transactions.schema.ts';
import { LETTER_DOCS } from './letters.docs.ts';
import { Text } from './letters.routes.ts';
import { Letter } from './letters.schema.ts';
import { claimLetter } from './letters.service.ts';
import { sweepLetters } from './sweep.service.ts';
import { ownClaim, presentLetter } from './views.service.ts';

/** Claims of letters and the expiry sweep (after the letters' creation and lists, src/app.ts). */
export function registerLetterClaimRoutes(app: App, deps: Deps): void {
  app.get(
    '/transfer/letter/claim',
    {
      config: { auth: 'either', errors: ['invalid_claim_code', 'letter_not_found'] },
      schema: {
        operationId: 'getOwnClaim',
        tags: ['Letters'],
        summary: "The caller's own claim of a letter, by its claim code",
        description: LETTER_DOCS.getOwnClaim,
        querystring: Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: responses({ 200: Type.Object({ letter: Letter, transaction: Transaction }) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      return ok(await ownClaim(deps, user.id, request.query.code, principal.scope));
    },
  );

  app.post(
    '/transfer/letter/claim',
    {
      config: {
        auth: 'either',
        rate: 'claim',
        errors: [
          'invalid_claim_code',
          'cannot_claim_own_letter',
          'letter_not_found',
          'not_found',
          'already_claimed',
          'letter_not_claimable',
          'letter_expired',
          'claim_failed',
          'claim_unsettled',
          'escrow_vault_underfunded',
          ...MONEY_CONFIGURATION_ERRORS,
        ],
      },
      schema: {
        operationId: 'claimLetter',
        tags: ['Letters'],
        summary: 'Claim a letter into one of your wallets',
        description: LETTER_DOCS.claimLetter,
        body: Type.Object({ claimCode: Type.String({ minLength: 1, maxLength: 64 }), walletId: Text(64) }),
        response: responses({ 200: Type.Object({ letter: Letter, transaction: Transaction }) }),
      },
    },
    async (request) => {
      const { user, principal } = principalOf(request);
      const outcome = await claimLetter(
        deps,
        { user, principal: principalKey(principal) },
        principal.scope,
        request.body,
        request.log,
      );
      return ok({
        letter: await presentLetter(deps, outcome.letter, { userId: user.id, scope: principal.scope }),
        transaction: toTransaction(outcome.transaction, deps.network),
      });
    },
  );

  app.post(
    '/transfer/letter/sweep',
    {
      config: { auth: 'operator', rate: 'none' },
      schema: {
        operationId: 'sweepLetters',
        tags: ['Letters'],
        summary: 'Operator sweep: expire and refund, retry failed refunds, reconcile claims',
        description: LETTER_DOCS.sweepLetters,
        response: responses({
          200: Type.Object({ expired: Type.Integer(), refunded: Type.Integer(), reconciled: Type.Integer() }),
        }),
      },
    },
    async () => ok(await sweepLetters(deps)),
  );
}
