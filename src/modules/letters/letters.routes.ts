import { Type } from '@sinclair/typebox';
import { LETTER_STATUSES } from '../../db/schema/letters.ts';
import type { Deps } from '../../deps.ts';
import { principalKey, principalOf } from '../../http/auth.ts';
import { pageFields, positionOf } from '../../http/cursor.ts';
import { ErrorEnvelope, IdParam, ok, PageOf, PageQueryFields, responses } from '../../http/envelope.ts';
import { rateLimitHeaders } from '../../http/rate-limit.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { parseAmount } from '../../lib/money.ts';
import { consume } from '../../lib/rate-limit.ts';
import { MONEY_CONFIGURATION_ERRORS } from '../network/network.service.ts';
import { CLAIM_MAGIC_AMOUNTS, LETTER_MAGIC_AMOUNTS } from '../sandbox/sandbox.schema.ts';
import { Transaction, toTransaction } from '../transactions/transactions.schema.ts';
import { listLetters } from './letters.repository.ts';
import { countryName, Letter, LetterPreview } from './letters.schema.ts';
import { claimLetter, createLetter, voidLetter } from './letters.service.ts';
import { letterPdf, mailLetter } from './mailing.service.ts';
import { sweepLetters } from './sweep.service.ts';
import {
  ownClaim,
  ownLetter,
  presentLetter,
  presentLetters,
  previewLetter,
  viewLetter,
} from './views.service.ts';

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const OptionalText = (max: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength: max }), Type.Null()]));

const CreateLetterBody = Type.Object({
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

const LetterData = Type.Object({ letter: Letter });

function parseClaimOrigin(raw: string | undefined, fallback: string): string {
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
          'escrow_failed',
          'escrow_unsettled',
          'upstream_error',
          'spend_limit_exceeded',
          ...MONEY_CONFIGURATION_ERRORS,
        ],
      },
      schema: {
        operationId: 'createLetter',
        tags: ['Letters'],
        summary: 'Create a letter of value: escrow a sealed amount',
        description:
          'Blocks up to about 20 s until the escrow leg is confirmed and verified, then answers 201 with the letter ' +
          'ESCROWED; `502 escrow_unsettled` with `{letterId, txHash}` when the escrow was sent but is not settled yet. ' +
          'Through an API key with a spend limit, a letter whose amount would take the key past it over the last 24 ' +
          'hours is `403 spend_limit_exceeded` with `details: {limit, spent, remaining, resetsAt}`.' +
          LETTER_MAGIC_AMOUNTS,
        body: CreateLetterBody,
        response: responses({ 201: LetterData }),
      },
    },
    async (request, reply) => {
      const { principal, user } = principalOf(request);
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
      );
      return reply.code(201).send(ok({ letter: await presentLetter(deps, letter, { userId: user.id }) }));
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
        items: await presentLetters(deps, found.items, { userId: user.id }),
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

  app.get(
    '/transfer/letter/claim',
    {
      config: { auth: 'either', errors: ['invalid_claim_code', 'letter_not_found'] },
      schema: {
        operationId: 'getOwnClaim',
        tags: ['Letters'],
        summary: "The caller's own claim of a letter, by its claim code",
        description:
          'For the claimant only: the letter (amount and memo revealed once CLAIMED) and the claim transaction, ' +
          'as the claim answered them, without claiming again. Anyone else, and a code that matches no claim of ' +
          "the caller's, reads `404 letter_not_found`; the public preview tells them whether it is claimed.",
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
          'upstream_error',
          'escrow_vault_underfunded',
          ...MONEY_CONFIGURATION_ERRORS,
        ],
      },
      schema: {
        operationId: 'claimLetter',
        tags: ['Letters'],
        summary: 'Claim a letter into one of your wallets',
        description:
          'Blocks up to about 20 s. First claimant wins. The same principal (the same API key, or the same ' +
          'browser session) repeating into the same wallet gets the existing claim back (200); any other principal, ' +
          'even of the same account, or another wallet, gets `409 already_claimed`. Limited to 10 attempts per 15 ' +
          'minutes per principal and IP.' +
          CLAIM_MAGIC_AMOUNTS,
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
        letter: await presentLetter(deps, outcome.letter, { userId: user.id }),
        transaction: toTransaction(outcome.transaction, deps.network),
      });
    },
  );

  app.post(
    '/transfer/letter/sweep',
    {
      config: { auth: 'operator', rate: 'none', errors: ['service_unavailable'] },
      schema: {
        operationId: 'sweepLetters',
        tags: ['Letters'],
        summary: 'Operator sweep: expire and refund, retry failed refunds, reconcile claims',
        description:
          'Authenticated by the operator secret in the `X-Sweep-Secret` header (SWEEP_SECRET; `503 ' +
          'configuration_missing` while it is not set), never by a user credential.',
        response: responses({
          200: Type.Object({ expired: Type.Integer(), refunded: Type.Integer(), reconciled: Type.Integer() }),
        }),
      },
    },
    async () => ok(await sweepLetters(deps)),
  );

  app.get(
    '/transfer/letter/:id',
    {
      config: { auth: 'either', notFound: 'letter_not_found' },
      schema: {
        operationId: 'getLetter',
        tags: ['Letters'],
        summary: 'One letter',
        params: IdParam,
        response: responses({ 200: LetterData }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      return ok({ letter: await viewLetter(deps, user.id, request.params.id, principal.scope, request.log) });
    },
  );

  app.get(
    '/transfer/letter/:id/pdf',
    {
      config: { auth: 'either', notFound: 'letter_not_found' },
      schema: {
        operationId: 'getLetterPdf',
        tags: ['Letters'],
        summary:
          'The printable letter (PDF): address, instructions, claim code and its QR; never the amount or memo',
        params: IdParam,
        produces: ['application/pdf'],
        // Sent as a Buffer, which Fastify never serializes: this only documents the body.
        response: {
          200: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The letter as a PDF' }),
        },
      },
    },
    async (request, reply) => {
      const { principal, user } = principalOf(request);
      const letter = await ownLetter(deps, user.id, request.params.id, principal.scope);
      const pdf = await letterPdf(deps, letter);
      return reply
        .type('application/pdf')
        .header('Content-Disposition', `attachment; filename="sealpay-letter-${letter.id}.pdf"`)
        .header('Cache-Control', 'no-store')
        .send(pdf);
    },
  );

  app.post(
    '/transfer/letter/:id/mail',
    {
      config: {
        auth: 'either',
        notFound: 'letter_not_found',
        optionalBody: true,
        errors: [
          'claim_origin_not_public',
          'delivery_method_unavailable',
          'letter_already_mailed',
          'letter_not_claimable',
          'postage_unavailable',
          'upstream_error',
          'mail_provider_not_configured',
        ],
      },
      schema: {
        operationId: 'mailLetter',
        tags: ['Letters'],
        summary: 'Print and mail an escrowed letter',
        description:
          'Idempotent: a retry adopts the mailing the provider already accepted. Needs the claim origin fixed at ' +
          'creation to be https. `tracked` is certified (domestic) or registered (international) mail with a ' +
          'tracking number; `courier` is not offered. Default `standard`. With a provider test key (and on the ' +
          'local print sandbox) letters are validated and priced but never printed: `mail.testMode` is true. ' +
          'A failed attempt leaves the letter ESCROWED, with the attempt recorded and the reason in `error` ' +
          '(cleared by a later successful mailing). Errors: `409 letter_already_mailed`, `422 ' +
          'postage_unavailable` (the provider refused the letter: fix it, do not retry as is), `503 ' +
          'mail_provider_not_configured`, `404 letter_not_found`, `400 claim_origin_not_public`, `400 ' +
          'delivery_method_unavailable`, and `500 internal_error` with `details: {letterId, retryable: true}` ' +
          'when the print provider could not be reached or failed: nothing was mailed twice, retry with backoff.',
        params: IdParam,
        body: Type.Object({
          deliveryMethod: Type.Optional(
            Type.Union([Type.Literal('standard'), Type.Literal('tracked'), Type.Literal('courier')], {
              default: 'standard',
            }),
          ),
          provider: Type.Optional(Type.Literal('printer')),
        }),
        response: {
          ...responses({ 200: LetterData }),
          500: Type.Ref(ErrorEnvelope, {
            description:
              '`internal_error`: the print provider could not be reached or failed; nothing was mailed twice, ' +
              'retry with backoff (`details: {letterId, retryable: true}`)',
          }),
          503: Type.Ref(ErrorEnvelope, { description: '`mail_provider_not_configured`' }),
        },
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const method = request.body.deliveryMethod ?? 'standard';
      if (method === 'courier') {
        throw new AppError(
          'delivery_method_unavailable',
          'Courier delivery is not offered; use standard or tracked.',
        );
      }
      const letter = await ownLetter(deps, user.id, request.params.id, principal.scope);
      const mailed = await mailLetter(deps, letter, method);
      return ok({ letter: await presentLetter(deps, mailed, { userId: user.id }) });
    },
  );

  app.post(
    '/transfer/letter/:id/void',
    {
      config: {
        auth: 'either',
        notFound: 'letter_not_found',
        optionalBody: true,
        errors: [
          'void_requires_acknowledgement',
          'already_claimed',
          'letter_not_claimable',
          'service_unavailable',
        ],
      },
      schema: {
        operationId: 'voidLetter',
        tags: ['Letters'],
        summary: 'Void a letter and refund its escrow to the sending wallet',
        description: 'A MAILED letter needs `acknowledgeMailed: true`: the paper letter stops working.',
        params: IdParam,
        body: Type.Object({ acknowledgeMailed: Type.Optional(Type.Boolean()) }),
        response: responses({ 200: LetterData }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const letter = await ownLetter(deps, user.id, request.params.id, principal.scope);
      const voided = await voidLetter(deps, letter, request.body.acknowledgeMailed === true, request.log);
      return ok({ letter: await presentLetter(deps, voided, { userId: user.id }) });
    },
  );
}
