import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { type Address, getAddress, isAddress, zeroAddress } from 'viem';
import {
  TRANSACTION_DIRECTIONS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from '../../db/schema/transactions.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { pageFields, positionOf } from '../../http/cursor.ts';
import { IdParam, JSON_CONTENT_TYPE, ok, PageOf, PageQueryFields, responses } from '../../http/envelope.ts';
import type { DocumentedError } from '../../http/openapi.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { parseAmount } from '../../lib/money.ts';
import { MONEY_CONFIGURATION_ERRORS } from '../network/network.service.ts';
import { QUEUED_MAGIC_AMOUNTS } from '../sandbox/sandbox.schema.ts';
import { ownWallet } from '../wallets/wallets.service.ts';
import { idempotencyKeyOf, type MoneyMovement, queueMoneyMovement } from './money.service.ts';
import { listTransactions } from './transactions.repository.ts';
import { Transaction, toTransaction } from './transactions.schema.ts';
import { ownTransaction } from './transactions.service.ts';

const WalletId = Type.String({ minLength: 1, maxLength: 64 });
// Amounts are validated by parseAmount (400 invalid_amount), not by the schema, so that a number or a
// malformed string gets the interface's own code.
const AmountField = Type.Unknown({ description: 'Decimal string in human units, e.g. "12.50"' });
// Required, but its absence is the interface's `invalid_amount`, not a schema `validation_error`.
const RequiredAmount = Type.Optional(
  Type.Unknown({ description: 'Required. Decimal string in human units, e.g. "12.50"' }),
);
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: '1 to 255 characters; a repeat returns the original 201' }),
  ),
});
const TransactionData = Type.Object({ transaction: Transaction });
/** What the four queued operations refuse before queueing (their later failures are FAILED transactions). */
const QUEUED_ERRORS: DocumentedError[] = [
  'invalid_amount',
  'not_found',
  'wallet_not_custodial',
  'insufficient_balance',
  'idempotency_conflict',
  ...MONEY_CONFIGURATION_ERRORS,
];

/** Every value of the Idempotency-Key header as sent (`request.headers` has them joined into one). */
function idempotencyKeysSent(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const sent: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'idempotency-key') sent.push(raw[i + 1] as string);
  }
  return sent;
}

/**
 * The common path of the four queued operations: the Idempotency-Key and the amount parsed, the QUEUED row (or the
 * key's replay) recorded, and 201.
 */
async function queueFromRequest(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: { type: MoneyMovement; walletId: string; amount: unknown; to?: Address },
) {
  const { principal, user } = principalOf(request);
  const idempotencyKey = idempotencyKeyOf(idempotencyKeysSent(request));
  const amount = parseAmount(params.amount);
  const row = await queueMoneyMovement(deps, user.id, principal.scope, {
    type: params.type,
    walletId: params.walletId,
    amount,
    ...(params.to ? { to: params.to } : {}),
    idempotencyKey,
  });
  return reply.code(201).send(ok({ transaction: toTransaction(row, deps.network) }));
}

export function registerTransactionRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

  if (deps.config.environment === 'sandbox') {
    app.post(
      '/fund',
      {
        config: {
          auth: 'either',
          errors: QUEUED_ERRORS,
        },
        schema: {
          operationId: 'fundWallet',
          tags: ['Money movement'],
          summary: 'Faucet (sandbox only): test STABLE plus a gas top-up',
          description:
            'Capped at 1000 STABLE per account over a rolling 24 hours; past the cap the transaction ends FAILED ' +
            'with `errorCode: faucet_cap_exceeded`. Answers 201 with the transaction QUEUED.' +
            QUEUED_MAGIC_AMOUNTS,
          headers: IdempotencyHeaders,
          body: Type.Object({ walletId: WalletId, amount: Type.Optional(AmountField) }),
          response: responses({ 201: TransactionData }),
        },
      },
      async (request, reply) =>
        queueFromRequest(deps, request, reply, {
          type: 'FUND',
          walletId: request.body.walletId,
          amount: request.body.amount ?? deps.config.faucet.defaultAmount,
        }),
    );
  } else {
    // Production has no faucet, and says so before anything else: credential, content type, body. Without this
    // route the not-found handler would answer, but only after Fastify has read and parsed the body (a malformed
    // one would get 400 invalid_json, an oversized one 413); a route's onRequest hook runs before the body is read.
    const noFaucet: onRequestHookHandler = (request, _reply, done) =>
      done(new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));
    app.post(
      '/fund',
      { config: { auth: 'none', rate: 'none' }, schema: { hide: true }, onRequest: noFaucet },
      async () => {
        throw new AppError('not_found', 'There is no faucet in production.');
      },
    );
  }

  app.post(
    '/mint',
    {
      config: {
        auth: 'either',
        errors: QUEUED_ERRORS,
      },
      schema: {
        operationId: 'mintConfidential',
        tags: ['Money movement'],
        summary: 'Mint cSTABLE by wrapping public STABLE (1:1)',
        description: `Answers 201 with the transaction QUEUED.${QUEUED_MAGIC_AMOUNTS}`,
        headers: IdempotencyHeaders,
        body: Type.Object({ walletId: WalletId, amount: RequiredAmount }),
        response: responses({ 201: TransactionData }),
      },
    },
    async (request, reply) =>
      queueFromRequest(deps, request, reply, {
        type: 'MINT',
        walletId: request.body.walletId,
        amount: request.body.amount,
      }),
  );

  app.post(
    '/transfer',
    {
      config: {
        auth: 'either',
        errors: [...QUEUED_ERRORS, 'invalid_recipient', 'spend_limit_exceeded'],
      },
      schema: {
        operationId: 'createTransfer',
        tags: ['Money movement'],
        summary: 'Confidential transfer of cSTABLE to an address',
        description:
          'A transfer the confidential balance cannot cover ends FAILED (`transfer_failed`): it moved nothing. ' +
          'Through an API key with a spend limit, a transfer that would take the key past it over the last 24 ' +
          'hours is `403 spend_limit_exceeded` with `details: {limit, spent, remaining, resetsAt}`.' +
          QUEUED_MAGIC_AMOUNTS,
        headers: IdempotencyHeaders,
        body: Type.Object({
          walletId: WalletId,
          to: Type.String({ maxLength: 100 }),
          amount: RequiredAmount,
        }),
        response: responses({ 201: TransactionData }),
      },
    },
    async (request, reply) => {
      parseAmount(request.body.amount);
      const { to } = request.body;
      if (!isAddress(to, { strict: false }) || to.toLowerCase() === zeroAddress) {
        throw new AppError('invalid_recipient', '`to` must be a valid, non-zero EVM address.');
      }
      return queueFromRequest(deps, request, reply, {
        type: 'TRANSFER',
        walletId: request.body.walletId,
        amount: request.body.amount,
        to: getAddress(to.toLowerCase()),
      });
    },
  );

  app.post(
    '/redeem',
    {
      config: {
        auth: 'either',
        errors: QUEUED_ERRORS,
      },
      schema: {
        operationId: 'redeemConfidential',
        tags: ['Money movement'],
        summary: 'Redeem cSTABLE into public STABLE (unwrap, then settlement)',
        description: `Goes PENDING, then SETTLING while the payout is finalized, and ends SETTLED.${QUEUED_MAGIC_AMOUNTS}`,
        headers: IdempotencyHeaders,
        body: Type.Object({ walletId: WalletId, amount: RequiredAmount }),
        response: responses({ 201: TransactionData }),
      },
    },
    async (request, reply) =>
      queueFromRequest(deps, request, reply, {
        type: 'REDEEM',
        walletId: request.body.walletId,
        amount: request.body.amount,
      }),
  );

  app.get(
    '/transactions',
    {
      config: { auth: 'either', errors: ['not_found'] },
      schema: {
        operationId: 'listTransactions',
        tags: ['Transactions'],
        summary: 'List transactions, newest first',
        querystring: Type.Object({
          ...PageQueryFields,
          walletId: Type.Optional(WalletId),
          type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((value) => Type.Literal(value)))),
          status: Type.Optional(Type.Union(TRANSACTION_STATUSES.map((value) => Type.Literal(value)))),
          direction: Type.Optional(Type.Union(TRANSACTION_DIRECTIONS.map((value) => Type.Literal(value)))),
        }),
        response: responses({ 200: PageOf(Transaction) }),
      },
    },
    async (request, reply) => {
      const { principal, user } = principalOf(request);
      const { walletIds } = principal.scope;
      // The same request of the same account and wallet scope, while none of its transactions changed: the bytes
      // sent last time (a wallet's owner never changes, so the ownership check holds as well).
      const pages = deps.transactionPages;
      const pageRequest = walletIds ? `${walletIds.join(',')} ${request.url}` : request.url;
      const kept = pages?.find(user.id, pageRequest);
      if (kept !== undefined) return reply.type(JSON_CONTENT_TYPE).send(kept);
      const generation = pages?.generation(user.id) ?? 0;
      const { pageSize = 20, walletId, type, status, direction } = request.query;
      const position = positionOf(request.query);
      if (walletId) await ownWallet(deps, user.id, walletId, principal.scope);
      const found = await listTransactions(
        db,
        {
          userId: user.id,
          ...(walletIds ? { inWallets: walletIds } : {}),
          ...(walletId ? { walletId } : {}),
          ...(type ? { type } : {}),
          ...(status ? { status } : {}),
          ...(direction ? { direction } : {}),
        },
        position,
        pageSize,
      );
      const answer = ok({
        items: found.items.map((row) => toTransaction(row, deps.network)),
        pageSize,
        total: found.total,
        ...pageFields(position, found),
      });
      if (!pages) return answer;
      // The route's own serializer (its response schema), as Fastify would have sent it.
      const body = Buffer.from(String(reply.serialize(answer)));
      pages.keep(user.id, pageRequest, generation, body);
      return reply.type(JSON_CONTENT_TYPE).send(body);
    },
  );

  app.get(
    '/transactions/:id',
    {
      config: { auth: 'either' },
      schema: {
        operationId: 'getTransaction',
        tags: ['Transactions'],
        summary: 'One transaction',
        params: IdParam,
        response: responses({ 200: TransactionData }),
      },
    },
    async (request) => {
      const { principal, user } = principalOf(request);
      const row = await ownTransaction(deps, user.id, request.params.id, principal.scope);
      return ok({ transaction: toTransaction(row, deps.network) });
    },
  );
}
