import { Type } from '@sinclair/typebox';
import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  type WebhookEventRow,
} from '../../db/schema/index.ts';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/envelope.ts';
import { iso } from '../../lib/time.ts';

export const WebhookEventTypeSchema = Type.Union(
  WEBHOOK_EVENT_TYPES.map((value) => Type.Literal(value)),
  { description: 'An event an endpoint can subscribe to' },
);

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Nullable(
      Type.Array(WebhookEventTypeSchema, { description: 'The events sent here; null for every event' }),
    ),
    enabled: Type.Boolean(),
    status: Type.Union([Type.Literal('active'), Type.Literal('failing'), Type.Literal('disabled')], {
      description: '`failing` once a delivery gave up after 3 days of retries, until the next success',
    }),
    failingSince: NullableTimestamp,
    previousSecretExpiresAt: Nullable(
      Type.String({
        format: 'date-time',
        description: 'After a rotation: until when the old secret signs beside the new one',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookEndpoint' },
);

export function toWebhookEndpoint(row: WebhookEndpointRow, now: Date) {
  const previousActive = row.previousSecretExpiresAt && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as Array<(typeof WEBHOOK_EVENT_TYPES)[number]> | null,
    enabled: row.enabled,
    status: !row.enabled
      ? ('disabled' as const)
      : row.failingSince
        ? ('failing' as const)
        : ('active' as const),
    failingSince: row.failingSince ? iso(row.failingSince) : null,
    previousSecretExpiresAt: previousActive ? iso(row.previousSecretExpiresAt) : null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export const WebhookAttempt = Type.Object(
  {
    statusCode: Nullable(
      Type.Integer({ description: "The endpoint's HTTP status; null when none came back" }),
    ),
    durationMs: Type.Integer(),
    error: Nullable(
      Type.String({ description: 'Why the attempt failed (timeout, refused address, status)' }),
    ),
    attemptedAt: Timestamp,
  },
  { description: 'One HTTP attempt of a delivery' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String(),
    endpointId: Type.String(),
    eventId: Type.String({ description: 'The `webhook-id` header of every attempt of this event' }),
    eventType: Type.String(),
    status: Type.Union(WEBHOOK_DELIVERY_STATUSES.map((value) => Type.Literal(value))),
    attempts: Type.Array(WebhookAttempt),
    nextAttemptAt: NullableTimestamp,
    deliveredAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { title: 'WebhookDelivery' },
);

export function toWebhookDelivery(
  row: WebhookDeliveryRow,
  event: Pick<WebhookEventRow, 'type'>,
  attempts: WebhookAttemptRow[],
) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: event.type,
    status: row.status,
    attempts: attempts.map((attempt) => ({
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
      attemptedAt: iso(attempt.attemptedAt),
    })),
    nextAttemptAt: row.status === 'PENDING' ? iso(row.nextAttemptAt) : null,
    deliveredAt: row.deliveredAt ? iso(row.deliveredAt) : null,
    createdAt: iso(row.createdAt),
  };
}
