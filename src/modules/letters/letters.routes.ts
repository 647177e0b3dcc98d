import { Type } from '@sinclair/typebox';
import { LETTER_STATUSES } from '../../db/schema/letters.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { pageFields, positionOf } from '../../http/cursor.ts';
import { ok, PageOf, PageQueryFields, responses } from '../../http/envelope.ts';
import { IdempotencyHeaders, idempotencyKeysSent } from '../../http/idempotency.ts';
import { rateLimitHeaders } from '../../http/rate-limit.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { parseAmount } from '../../lib/money.ts';
import { consume } from '../../lib/rate-limit.ts';
import { CHAIN_READ_ERRORS, MONEY_CONFIGURATION_ERRORS } from '../network/network.service.ts';
import { idempotencyKeyOf } from '../transactions/money.service.ts';
import { LETTER_DOCS } from './letters.docs.ts';
import { listLetters } from './letters.repository.ts';
import { countryName, Letter, LetterPreview } from './letters.schema.ts';
import { createLetter } from './letters.service.ts';
import { presentLetter, presentLetters, previewLetter } from './views.service.ts';

export const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
export const OptionalText = (max: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]));

export const CreateLetterBody = Type.Object({
  walletId: Text(64),
  amount: Type.Optional(Type.Unknown({ description: 'Required. Decimal string in human units' })),
  memo: Type.Optional(Type.String({ maxLength: 500 })),
  recipient: Type.Object({
    name: Text(200),
    address: Type.Object({
      line1: Text(200),
      line2: OptionalText(200),
      landmark: OptionalText(200),
      city: Text(100),
      region: Text(100),
      postal: OptionalText(20),
      country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country code' }),
    }),
  }),
  expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 90 })),
  claimOrigin: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Origin of the claim URL; default: the service origin',
    }),
  ),
});

export const LetterData = Type.Object({ letter: Letter });

export function parseClaimOrigin(raw: string | undefined, fallback: string): string {
  if (raw === undefined) return fallback;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    return url.origin;
  } catch {
    throw new AppError('validation_error', 'claimOrigin must be an http(s) origin.', {
      details: [
        { path: 'claimOrigin', message: 'must be an http(s) origin such as https://pay.example.com' },
      ],
    });
  }
}

export function registerLetterRoutes(app: App, deps: Deps): void {
  app.post(
    '/transfer/letter',
    {
      config: {
        auth: 'either',
        errors: [
          'invalid_amount',
          'not_found',
          'wallet_not_custodial',
          'insufficient_balance',
          'escrow_unsettled',
          'spend_limit_exceeded',
          'idempotency_conflict',
          ...MONEY_CONFIGURATION_ERRORS,
          ...CHAIN_READ_ERRORS,
        ],
      },
      schema: {
        operationId: 'createLetter',
        tags: ['Letters'],
        summary: 'Create a letter of value: escrow a sealed amount',
        description: LETTER_DOCS.createLetter,
        headers: IdempotencyHeaders,
        body: CreateLetterBody,
        response: responses({ 201: LetterData }),
      },
    },
    async (request, reply) => {
      const { principal, user } = principalOf(request);
      const idempotencyKey = idempotencyKeyOf(idempotencyKeysSent(request));
      const body = request.body;
      const amount = parseAmount(body.amount);
      const country = body.recipient.address.country.toUpperCase();
      if (!countryName(country)) {
        throw new AppError('validation_error', 'Unknown country code.', {
          details: [
            { path: 'recipient.address.country', message: 'must be an ISO 3166-1 alpha-2 country code' },
          ],
        });
      }
      const claimOrigin = parseClaimOrigin(body.claimOrigin, deps.config.publicOrigin);
      const address = body.recipient.address;
      const letter = await createLetter(
        deps,
        user,
        principal.scope,
        {
          walletId: body.walletId,
          amount,
          memo: body.memo ?? null,
          recipient: {
            name: body.recipient.name,
            address: {
              line1: address.line1,
              line2: address.line2 ?? null,
              landmark: address.landmark ?? null,
              city: address.city,
              region: address.region,
              postal: address.postal ?? null,
              country,
            },
          },
          expiresInDays: body.expiresInDays ?? 90,
          claimOrigin,
        },
        request.log,
        idempotencyKey,
      );
      const viewer = { userId: user.id, scope: principal.scope };
      return reply.code(201).send(ok({ letter: await presentLetter(deps, letter, viewer) }));
    },
  );

  app.get(
    '/transfer/letter',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'listLetters',
        tags: ['Letters'],
        summary: "The caller's sent letters, newest first",
        description: LETTER_DOCS.listLetters,
        querystring: Type.Object({
          ...PageQueryFields,
          status: Type.Optional(Type.Union(LETTER_STATUSES.map((value) => Type.Literal(value)))),
        }),
        response: responses({ 200: PageOf(Letter) }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const { pageSize = 20, status } = request.query;
      const position = positionOf(request.query);
      const inWallets = principal.scope.walletIds ?? undefined;
      const found = await listLetters(deps.database.db, user.id, { status, inWallets }, position, pageSize);
      return ok({
        items: await presentLetters(deps, found.items, { userId: user.id, scope: principal.scope }),
        pageSize,
        total: found.total,
        ...pageFields(position, found),
      });
    },
  );

  app.get(
    '/transfer/letter/preview',
    {
      config: { auth: 'none', rate: 'own', errors: ['invalid_claim_code', 'letter_not_found'] },
      schema: {
        operationId: 'previewLetter',
        tags: ['Letters'],
        summary: 'Public preview of a letter by its claim code (nothing sealed is revealed)',
        querystring: Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: responses({
          200: Type.Object({ letter: LetterPreview }),
        }),
      },
    },
    async (request, reply) => {
      const limit = { bucket: 'preview', max: deps.config.rateLimits.previewsPerMinute, windowMs: 60_000 };
      await consume(deps.rateLimits, rateLimitHeaders(reply), limit, `ip:${request.ip}`, deps.clock.now());
      return ok({ letter: await previewLetter(deps, request.query.code) });
    },
  );
}
