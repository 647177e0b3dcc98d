import { Type } from '@sinclair/typebox';
import {
  TRANSACTION_DIRECTIONS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from '../../db/schema/transactions.ts';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { pageFields, positionOf } from '../../http/cursor.ts';
import { IdParam, JSON_CONTENT_TYPE, ok, PageOf, PageQueryFields, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { ownWallet } from '../wallets/wallets.service.ts';
import { listTransactions } from './transactions.repository.ts';
import { TransactionData, WalletId } from './transactions.routes.ts';
import { Transaction, toTransaction } from './transactions.schema.ts';
import { ownTransaction } from './transactions.service.ts';

/** The transaction list and one transaction (after the queued operations, src/app.ts). */
export function registerTransactionReadRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;

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
