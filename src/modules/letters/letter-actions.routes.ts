import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { ErrorEnvelope, IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { LETTER_DOCS } from './letters.docs.ts';
import { LetterData } from './letters.routes.ts';
import { voidLetter } from './letters.service.ts';
import { letterPdf, mailLetter } from './mailing.service.ts';
import { ownLetter, presentLetter, printableLetter, viewLetter } from './views.service.ts';

/** One letter's own routes: read it, its PDF, mail it, void it (after the claims, src/app.ts). */
export function registerLetterActionRoutes(app: App, deps: Deps): void {
  app.get(
    '/transfer/letter/:id',
    {
      config: { auth: 'either', notFound: 'letter_not_found' },
      schema: {
        operationId: 'getLetter',
        tags: ['Letters'],
        summary: 'One letter',
        description: LETTER_DOCS.getLetter,
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
      config: {
        auth: 'either',
        notFound: 'letter_not_found',
        errors: ['insufficient_scope', 'letter_not_claimable'],
      },
      schema: {
        operationId: 'getLetterPdf',
        tags: ['Letters'],
        summary:
          'The printable letter (PDF): address, instructions, claim code and its QR; never the amount or memo',
        description: LETTER_DOCS.getLetterPdf,
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
      const letter = await printableLetter(deps, user.id, request.params.id, principal.scope);
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
          'mail_provider_not_configured',
        ],
      },
      schema: {
        operationId: 'mailLetter',
        tags: ['Letters'],
        summary: 'Print and mail an escrowed letter',
        description: LETTER_DOCS.mailLetter,
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
            description: LETTER_DOCS.mailLetter2,
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
      return ok({ letter: await presentLetter(deps, mailed, { userId: user.id, scope: principal.scope }) });
    },
  );

  app.post(
    '/transfer/letter/:id/void',
    {
      config: {
        auth: 'either',
        notFound: 'letter_not_found',
        optionalBody: true,
        errors: ['void_requires_acknowledgement', 'already_claimed', 'letter_not_claimable'],
      },
      schema: {
        operationId: 'voidLetter',
        tags: ['Letters'],
        summary: 'Void a letter and refund its escrow to the sending wallet',
        description:
          'A MAILED letter needs `acknowledgeMailed: true`: the paper letter stops working. The service asks the ' +
          'print provider to cancel its mailing, best effort; when it did, `mail.status` reads `cancelled`.',
        params: IdParam,
        body: Type.Object({ acknowledgeMailed: Type.Optional(Type.Boolean()) }),
        response: responses({ 200: LetterData }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const letter = await ownLetter(deps, user.id, request.params.id, principal.scope);
      const voided = await voidLetter(deps, letter, request.body.acknowledgeMailed === true, request.log);
      return ok({ letter: await presentLetter(deps, voided, { userId: user.id, scope: principal.scope }) });
    },
  );
}
