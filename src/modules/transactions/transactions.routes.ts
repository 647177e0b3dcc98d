import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Address, getAddress, isAddress, zeroAddress } from 'viem';
import type { WalletRow } from '../../db/schema/index.ts';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../../db/schema/transactions.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, PageOf, PageQueryFields, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { AppError } from '../../lib/errors.ts';
import { parseAmount } from '../../lib/money.ts';
import { requireNetwork } from '../wallets/balances.ts';
import { ownWallet } from '../wallets/wallets.routes.ts';
import {
  assertCanSend,
  assertIdempotencyKey,
  assertPublicBalance,
  queueTransaction,
} from './money.service.ts';
import { findOwnTransaction, listTransactions } from './transactions.repository.ts';
import { Transaction, toTransaction } from './transactions.schema.ts';

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

/** A 503 naming what is missing, checked before anything is queued (so no transaction row exists). */
export function assertMoneyConfigured(deps: Deps): void {
  const network = requireNetwork(deps);
  if (network.rail.kind === 'fhe' && !deps.config.zamaApiKey) {
    throw new AppError(
      'fhe_credentials_missing',
      'Confidential operations are not configured: ZAMA_API_KEY is not set.',
    );
  }
  // The remote network's getters throw a 503 naming the variable when a setting is missing.
  void network.operator.address;
  void network.contracts.stablecoin;
  void network.contracts.confidentialToken;
}

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const raw = request.headers['idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  assertIdempotencyKey(key);
  return key;
}

interface QueueParams {
  type: 'FUND' | 'MINT' | 'TRANSFER' | 'REDEEM';
  walletId: string;
  amount: unknown;
  /** The recipient for a transfer; the wallet itself otherwise. */
  to?: Address;
  /** Request-time checks beyond ownership: every new request runs them; a replay of an existing key does not. */
  check?: (wallet: WalletRow, amount: bigint) => Promise<void>;
}

/**
 * The common path of the four queued operations: validate, check configuration and ownership, then record the
 * QUEUED row (or replay the Idempotency-Key's) and answer 201.
 */
async function queueFromRequest(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: QueueParams,
) {
  const { user } = principalOf(request);
  const idempotencyKey = idempotencyKeyOf(request);
  const amount = parseAmount(params.amount);
  assertMoneyConfigured(deps);
  const wallet = await ownWallet(deps, user.id, params.walletId);
  const funding = params.type === 'FUND';
  if (!funding) assertCanSend(wallet);
  const to = params.to ?? wallet.address;
  const { check } = params;
  const row = await queueTransaction(deps, {
    userId: user.id,
    wallet,
    type: params.type,
    amount,
    fromAddress: funding ? requireNetwork(deps).operator.address : wallet.address,
    toAddress: to,
    counterparty: funding ? 'Sandbox faucet' : null,
    idempotencyKey,
    requestFingerprint: [params.type, wallet.id, to, amount.toString()],
    ...(check ? { check: () => check(wallet, amount) } : {}),
  });
  return reply.code(201).send(ok({ transaction: toTransaction(row, deps.network) }));
}

export function registerTransactionRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

  if (deps.config.environment === 'sandbox') {
    app.post(
      '/fund',
      {
        config: { auth: 'either' },
        schema: {
          tags: ['Money movement'],
          summary: 'Faucet (sandbox only): test STABLE plus a gas top-up',
          description:
            'Capped at 1000 STABLE per account over a rolling 24 hours; past the cap the transaction ends FAILED ' +
            'with `errorCode: faucet_cap_exceeded`. Answers 201 with the transaction QUEUED.',
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
  }

  app.post(
    '/mint',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Money movement'],
        summary: 'Mint cSTABLE by wrapping public STABLE (1:1)',
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
        check: (wallet, amount) => assertPublicBalance(deps, wallet, amount),
      }),
  );

  app.post(
    '/transfer',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Money movement'],
        summary: 'Confidential transfer of cSTABLE to an address',
        description:
          'A transfer the confidential balance cannot cover ends FAILED (`transfer_failed`): it moved nothing.',
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
      config: { auth: 'either' },
      schema: {
        tags: ['Money movement'],
        summary: 'Redeem cSTABLE into public STABLE (unwrap, then settlement)',
        description: 'Goes PENDING, then SETTLING while the payout is finalized, and ends SETTLED.',
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
      config: { auth: 'either' },
      schema: {
        tags: ['Transactions'],
        summary: 'List transactions, newest first',
        querystring: Type.Object({
          ...PageQueryFields,
          walletId: Type.Optional(WalletId),
          type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((value) => Type.Literal(value)))),
          status: Type.Optional(Type.Union(TRANSACTION_STATUSES.map((value) => Type.Literal(value)))),
        }),
        response: responses({ 200: PageOf(Transaction) }),
      },
    },
    async (request) => {
      const { user } = principalOf(request);
      const { page = 1, pageSize = 20, walletId, type, status } = request.query;
      if (walletId) await ownWallet(deps, user.id, walletId);
      const { items, total } = await listTransactions(
        db,
        {
          userId: user.id,
          ...(walletId ? { walletId } : {}),
          ...(type ? { type } : {}),
          ...(status ? { status } : {}),
        },
        page,
        pageSize,
      );
      return ok({ items: items.map((row) => toTransaction(row, deps.network)), page, pageSize, total });
    },
  );

  app.get(
    '/transactions/:id',
    {
      config: { auth: 'either' },
      schema: {
        tags: ['Transactions'],
        summary: 'One transaction',
        params: IdParam,
        response: responses({ 200: TransactionData }),
      },
    },
    async (request) => {
      const row = await findOwnTransaction(db, principalOf(request).user.id, request.params.id);
      if (!row) throw new AppError('not_found', 'No such transaction.');
      return ok({ transaction: toTransaction(row, deps.network) });
    },
  );
}
