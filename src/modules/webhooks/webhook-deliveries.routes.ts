import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, OffsetPageOf, OffsetPageQueryFields, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { listDeliveries } from './webhooks.repository.ts';
import { DeliveryData, DeliveryParams, TAGS } from './webhooks.routes.ts';
import { toWebhookDelivery, WebhookDelivery } from './webhooks.schema.ts';
import { ownEndpoint, replayDelivery, sendTestEvent } from './webhooks.service.ts';

/** An endpoint's test event, its deliveries and their replay (after the endpoints, src/app.ts). */
export function registerWebhookDeliveryRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;
  const _now = () => deps.clock.now();

  app.post(
    '/webhooks/:id/test',
    {
      config: { auth: 'either' },
      schema: {
        tags: TAGS,
        operationId: 'sendWebhookTest',
        summary: 'Send a webhook.test event to the endpoint',
        description:
          'Queued at once and sent by the worker; follow it in the deliveries. Errors: `404 not_found`.',
        params: IdParam,
        response: responses({ 202: DeliveryData }),
      },
    },
    async (request, reply) => {
      const delivery = await sendTestEvent(deps, principalOf(request).user.id, request.params.id);
      return reply
        .code(202)
        .send(ok({ delivery: toWebhookDelivery(delivery, { type: 'webhook.test' }, []) }));
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { auth: 'either' },
      schema: {
        tags: TAGS,
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's deliveries, newest first, with every attempt",
        description: 'Errors: `404 not_found`.',
        params: IdParam,
        querystring: Type.Object({ ...OffsetPageQueryFields }),
        response: responses({ 200: OffsetPageOf(WebhookDelivery) }),
      },
    },
    async (request) => {
      const endpoint = await ownEndpoint(deps, principalOf(request).user.id, request.params.id);
      const { page = 1, pageSize = 20 } = request.query;
      const { items, total } = await listDeliveries(db, endpoint.id, page, pageSize);
      return ok({
        items: items.map((item) => toWebhookDelivery(item.delivery, item.event, item.attempts)),
        page,
        pageSize,
        total,
      });
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/replay',
    {
      config: { auth: 'session' },
      schema: {
        tags: TAGS,
        operationId: 'replayWebhookDelivery',
        summary: 'Send a delivered or failed event again',
        description: 'A new delivery of the same event, with the same `webhook-id`. Errors: `404 not_found`.',
        params: DeliveryParams,
        response: responses({ 202: DeliveryData }),
      },
    },
    async (request, reply) => {
      const { user } = principalOf(request);
      const { delivery, event } = await replayDelivery(
        deps,
        user.id,
        request.params.id,
        request.params.deliveryId,
      );
      return reply.code(202).send(ok({ delivery: toWebhookDelivery(delivery, event, []) }));
    },
  );
}
