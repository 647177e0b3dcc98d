import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { type Address, getAddress, isAddress, zeroAddress } from 'viem';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { ok, responses } from '../../http/envelope.ts';
import { IdempotencyHeaders, idempotencyKeysSent } from '../../http/idempotency.ts';
import type { DocumentedError } from '../../http/openapi.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { parseAmount } from '../../lib/money.ts';
import { CHAIN_READ_ERRORS, MONEY_CONFIGURATION_ERRORS } from '../network/network.service.ts';
import { idempotencyKeyOf, type MoneyMovement, queueMoneyMovement } from './money.service.ts';
import { TRANSACTION_DOCS } from './transactions.docs.ts';
import { Transaction, toTransaction } from './transactions.schema.ts';

export const WalletId = Type.String({ minLength: 1, maxLength: 64 });
// Amounts are validated by parseAmount (400 invalid_amount), not by the schema, so that a number or a
// malformed string gets the interface's own code.
export const AmountField = Type.Unknown({ description: 'Decimal string in human units, e.g. "12.50"' });
// Required, but its absence is the interface's `invalid_amount`, not a schema `validation_error`.
export const RequiredAmount = Type.Optional(
  Type.Unknown({ description: 'Required. Decimal string in human units, e.g. "12.50"' }),
);
export const TransactionData = Type.Object({ transaction: Transaction });
/** What the four queued operations refuse before queueing (their later failures are FAILED transactions). */
export const QUEUED_ERRORS: DocumentedError[] = [
  'invalid_amount',
  'not_found',
  'idempotency_conflict',
  ...MONEY_CONFIGURATION_ERRORS,
];
/** What the three that send from the wallet refuse besides (the faucet pays into any wallet, external ones too). */
const SENDING_ERRORS: DocumentedError[] = [...QUEUED_ERRORS, 'wallet_not_custodial'];

/**
 * The common path of the four queued operations: the Idempotency-Key and the amount parsed, the QUEUED row (or the
 * key's replay) recorded, and 201.
 */
export async function queueFromRequest(
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

/** The route (under the API prefix) a client queues `type` through, as the type's descriptor names it. */
function queueRoute(deps: Deps, type: MoneyMovement): string {
  const queue = deps.operations[type].queue;
  if (!queue) throw new Error(`The ${type} descriptor names no route a client queues it through.`);
  return queue.path;
}

export function registerTransactionRoutes(app: App, deps: Deps): void {
  if (deps.config.environment === 'sandbox') {
    app.post(
      queueRoute(deps, 'FUND'),
      {
        config: {
          auth: 'either',
          errors: QUEUED_ERRORS,
        },
        schema: {
          operationId: 'fundWallet',
          tags: ['Money movement'],
          summary: 'Faucet (sandbox only): test STABLE plus a gas top-up',
          description: TRANSACTION_DOCS.fundWallet,
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
      queueRoute(deps, 'FUND'),
      { config: { auth: 'none', rate: 'none' }, schema: { hide: true }, onRequest: noFaucet },
      async () => {
        throw new AppError('not_found', 'There is no faucet in production.');
      },
    );
  }

  app.post(
    queueRoute(deps, 'MINT'),
    {
      config: {
        auth: 'either',
        errors: [...SENDING_ERRORS, 'insufficient_balance', ...CHAIN_READ_ERRORS],
      },
      schema: {
        operationId: 'mintConfidential',
        tags: ['Money movement'],
        summary: 'Mint cSTABLE by wrapping public STABLE (1:1)',
        description: TRANSACTION_DOCS.mintConfidential,
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
    queueRoute(deps, 'TRANSFER'),
    {
      config: {
        auth: 'either',
        errors: [...SENDING_ERRORS, 'invalid_recipient', 'spend_limit_exceeded'],
      },
      schema: {
        operationId: 'createTransfer',
        tags: ['Money movement'],
        summary: 'Confidential transfer of cSTABLE to an address',
        description: TRANSACTION_DOCS.createTransfer,
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
    queueRoute(deps, 'REDEEM'),
    {
      config: {
        auth: 'either',
        errors: SENDING_ERRORS,
      },
      schema: {
        operationId: 'redeemConfidential',
        tags: ['Money movement'],
        summary: 'Redeem cSTABLE into public STABLE (unwrap, then settlement)',
        description: TRANSACTION_DOCS.redeemConfidential,
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
}
