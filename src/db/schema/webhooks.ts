import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { users } from './accounts.ts';
import { createdAt, serviceNow, ts, updatedAt } from './columns.ts';

/** What an account can subscribe to; `webhook.test` is sent on request only and cannot be subscribed to. */
export const WEBHOOK_EVENT_TYPES = [
  'transaction.created',
  'transaction.updated',
  'letter.created',
  'letter.mailed',
  'letter.claimed',
  'letter.voided',
  'letter.expired',
  'wallet.created',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number] | 'webhook.test';

/** Which resource an event's snapshot is a row of (the delivery renders it as the API shows that resource). */
export type WebhookResourceKind = 'transaction' | 'letter' | 'wallet' | 'test';

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    url: text('url').notNull(),
    description: text('description'),
    /** The event types sent to this endpoint; null for all of them. */
    events: jsonb('events').$type<string[]>(),
    enabled: boolean('enabled').notNull().default(true),
    /** The signing secret (`whsec_…`), sealed with the keyring: it must be read back to sign. */
    secretSealed: text('secret_sealed').notNull(),
    /** After a rotation, the secret it replaced keeps signing beside the new one until `previousSecretExpiresAt`. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    /** Set when a delivery gave up after its retries; cleared by the next success. */
    failingSince: ts('failing_since'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhook_endpoints_user_idx').on(t.userId)],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type NewWebhookEndpoint = typeof webhookEndpoints.$inferInsert;

/**
 * The event outbox: one row per change, written in the same database transaction as the change itself, so an
 * event is never lost on a crash and never sent for a change that rolled back. `id` is the `webhook-id` of every
 * delivery of it, retries included.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: text('id').primaryKey(),
    /** Insertion order, for delivering an endpoint's events in the order they happened. */
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    type: text('type').$type<WebhookEventType>().notNull(),
    resourceKind: text('resource_kind').$type<WebhookResourceKind>().notNull(),
    /** The changed row as it was written (secrets left out), rendered as the API shows it when delivered. */
    resource: jsonb('resource').$type<Record<string, unknown>>().notNull(),
    /**
     * Rows the resource's view shows beside it, as they were when the event was written (a letter's leg
     * transactions), so that the delivery renders the resource exactly as `GET` answered at that moment.
     */
    related: jsonb('related').$type<Record<string, unknown>[]>().notNull().default(sql`'[]'::jsonb`),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_events_user_idx').on(t.userId, t.createdAt)],
);

export type WebhookEventRow = typeof webhookEvents.$inferSelect;

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event to one endpoint: the worker's queue of sends (leases and guarded moves, like transactions). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id),
    eventSeq: bigint('event_seq', { mode: 'number' }).notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().default(serviceNow),
    leaseOwner: text('lease_owner'),
    leaseUntil: ts('lease_until'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    deliveredAt: ts('delivered_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'PENDING'`),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Every HTTP attempt of a delivery: what the endpoint answered and how long it took. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    attemptedAt: createdAt(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attemptedAt)],
);

export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
