import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, OffsetPageOf, OffsetPageQueryFields, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { ID_PATTERN } from '../../lib/ids.ts';
import { listDeliveries, listEndpoints } from './webhooks.repository.ts';
import {
  toWebhookDelivery,
  toWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventTypeSchema,
} from './webhooks.schema.ts';
import {
  createWebhook,
  deleteWebhook,
  ownEndpoint,
  replayDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from './webhooks.service.ts';

const TAGS = ['Webhooks'];
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https (http also in the sandbox)' });
const Events = Type.Array(WebhookEventTypeSchema, {
  maxItems: 20,
  description: 'The events to send; absent or empty for all of them',
});
const Description = Type.String({ maxLength: 500 });
const EndpointData = Type.Object({ endpoint: WebhookEndpoint });
const EndpointWithSecret = Type.Object({
  endpoint: WebhookEndpoint,
  secret: Type.String({ description: 'The signing secret (`whsec_…`), shown this once' }),
});
const DeliveryData = Type.Object({ delivery: WebhookDelivery });
const DeliveryParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN }),
  deliveryId: Type.String({ pattern: ID_PATTERN }),
});

export function registerWebhookRoutes(app: App, deps: Deps): void {
  const { db } = deps.database;
  const now = () => deps.clock.now();

  app.post(
    '/webhooks',
    {
      config: { auth: 'session', errors: ['invalid_webhook_url', 'webhook_limit_reached'] },
      schema: {
        tags: TAGS,
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description:
          'Events are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`: ' +
          '`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the secret `whsec_<base64>`). The body is ' +
          '`{type, timestamp, data}`: `data` is the transaction, letter or wallet as this API shows it (a ' +
          "letter's `amount` and `memo` stay `sealed` until it is claimed). Delivered at least once, the same " +
          '`webhook-id` on every retry; retried with backoff for 3 days; a 2xx within 10 s is success, redirects ' +
          'are not followed. The secret is shown once. At most 10 endpoints per account. Errors: ' +
          '`400 invalid_webhook_url`, `400 webhook_limit_reached`, `400 validation_error`.',
        body: Type.Object({
          url: Url,
          events: Type.Optional(Events),
          description: Type.Optional(Description),
        }),
        response: responses({ 201: EndpointWithSecret }),
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await createWebhook(deps, principalOf(request).user.id, request.body);
      return reply.code(201).send(ok({ endpoint: toWebhookEndpoint(endpoint, now()), secret }));
    },
  );

  app.get(
    '/webhooks',
    {
      config: { auth: 'either' },
      schema: {
        tags: TAGS,
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        response: responses({ 200: Type.Object({ endpoints: Type.Array(WebhookEndpoint) }) }),
      },
    },
    async (request) => {
      const rows = await listEndpoints(db, principalOf(request).user.id);
      return ok({ endpoints: rows.map((row) => toWebhookEndpoint(row, now())) });
    },
  );

  app.get(
    '/webhooks/:id',
    {
      config: { auth: 'either' },
      schema: {
        tags: TAGS,
        operationId: 'getWebhook',
        summary: 'One webhook endpoint',
        description: 'Errors: `404 not_found`.',
        params: IdParam,
        response: responses({ 200: EndpointData }),
      },
    },
    async (request) => {
      const endpoint = await ownEndpoint(deps, principalOf(request).user.id, request.params.id);
      return ok({ endpoint: toWebhookEndpoint(endpoint, now()) });
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      config: { auth: 'session', errors: ['invalid_webhook_url'] },
      schema: {
        tags: TAGS,
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint (url, events, description, enabled)',
        description: 'Errors: `404 not_found`, `400 invalid_webhook_url`, `400 validation_error`.',
        params: IdParam,
        body: Type.Object({
          url: Type.Optional(Url),
          events: Type.Optional(Events),
          description: Type.Optional(Description),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: responses({ 200: EndpointData }),
      },
    },
    async (request) => {
      const endpoint = await updateWebhook(
        deps,
        principalOf(request).user.id,
        request.params.id,
        request.body,
      );
      return ok({ endpoint: toWebhookEndpoint(endpoint, now()) });
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      config: { auth: 'session' },
      schema: {
        tags: TAGS,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint and its deliveries',
        description: 'Errors: `404 not_found`.',
        params: IdParam,
        response: responses({ 200: Type.Object({ deleted: Type.Literal(true), endpoint: WebhookEndpoint }) }),
      },
    },
    async (request) => {
      const endpoint = await deleteWebhook(deps, principalOf(request).user.id, request.params.id);
      return ok({ deleted: true as const, endpoint: toWebhookEndpoint(endpoint, now()) });
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { auth: 'session' },
      schema: {
        tags: TAGS,
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret',
        description:
          'The new secret is shown once; the old one keeps signing beside it for 24 hours (two `v1,` ' +
          'signatures). Errors: `404 not_found`.',
        params: IdParam,
        response: responses({ 200: EndpointWithSecret }),
      },
    },
    async (request) => {
      const { endpoint, secret } = await rotateWebhookSecret(
        deps,
        principalOf(request).user.id,
        request.params.id,
      );
      return ok({ endpoint: toWebhookEndpoint(endpoint, now()), secret });
    },
  );

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
