import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { IdParam, ok, responses } from '../../http/envelope.ts';
import type { App } from '../../http/types.ts';
import { ID_PATTERN } from '../../lib/ids.ts';
import { WEBHOOK_DOCS } from './webhooks.docs.ts';
import { listEndpoints } from './webhooks.repository.ts';
import {
  toWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventTypeSchema,
} from './webhooks.schema.ts';
import {
  createWebhook,
  deleteWebhook,
  ownEndpoint,
  rotateWebhookSecret,
  updateWebhook,
} from './webhooks.service.ts';

export const TAGS = ['Webhooks'];
export const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'https (http also in the sandbox)',
});
export const Events = Type.Array(WebhookEventTypeSchema, {
  maxItems: 20,
  description: 'The events to send; absent or empty for all of them',
});
export const Description = Type.String({ maxLength: 500 });
export const EndpointData = Type.Object({ endpoint: WebhookEndpoint });
export const EndpointWithSecret = Type.Object({
  endpoint: WebhookEndpoint,
  secret: Type.String({ description: 'The signing secret (`whsec_…`), shown this once' }),
});
export const DeliveryData = Type.Object({ delivery: WebhookDelivery });
export const DeliveryParams = Type.Object({
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
        description: WEBHOOK_DOCS.createWebhook,
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
        description: WEBHOOK_DOCS.rotateWebhookSecret,
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
}
