/**
 * The event outbox's writer. Every change an account can subscribe to calls `recordEvent` inside the database
 * transaction that writes the change (the repositories' inserts and guarded updates do it, so a caller cannot
 * forget it): the event commits with the change or not at all. One delivery row per subscribed endpoint is queued
 * with it; the worker sends them (src/modules/webhooks/delivery.service.ts).
 */
import { and, eq, getTableColumns, type InferSelectModel, type SQL, sql, type Table } from 'drizzle-orm';
import { newId } from '../lib/ids.ts';
import type { DbOrTx } from './client.ts';
import {
  type WebhookEventType,
  type WebhookResourceKind,
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
} from './schema/index.ts';

/**
 * Columns never copied into an event: secrets stay in their own rows. (A letter's memo is copied sealed: the
 * delivery opens it only once the letter is claimed.)
 */
const SECRET_COLUMNS = new Set(['sealedPrivateKey', 'claimCodeSealed', 'claimCodeHash']);

/** A row as JSON: bigints as decimal strings, dates as ISO strings, secret columns left out. */
export function snapshotOf(row: object): Record<string, unknown> {
  const snapshot: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (SECRET_COLUMNS.has(key)) continue;
    snapshot[key] =
      typeof value === 'bigint' ? value.toString() : value instanceof Date ? value.toISOString() : value;
  }
  return snapshot;
}

/**
 * A row again from its snapshot (`snapshotOf`), typed by its table: dates and bigints revived by the column's type, a
 * column left out (a secret) null.
 */
export function rowOf<T extends Table>(table: T, snapshot: Record<string, unknown>): InferSelectModel<T> {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = snapshot[key] ?? null;
    row[key] =
      value === null
        ? null
        : column.dataType === 'date'
          ? new Date(String(value))
          : column.dataType === 'bigint'
            ? BigInt(String(value))
            : value;
  }
  // A boundary: JSON the database kept, typed by the table it was written from (each column revived above).
  return row as InferSelectModel<T>;
}

export interface NewEvent {
  userId: string;
  type: WebhookEventType;
  kind: WebhookResourceKind;
  row: object;
  /**
   * The rows the resource's view shows beside it (a letter's leg transactions), read in the same database
   * transaction only when an endpoint wants the event.
   */
  related?: (db: DbOrTx) => Promise<readonly object[]>;
  /** Only this endpoint (a test event); otherwise every enabled endpoint of the account subscribed to `type`. */
  endpointId?: string;
}

/**
 * For a hot writer's `returning`: whether the account of the row written to `table` (a table with a `user_id`) has
 * an enabled endpoint. Most accounts have none, and then the writer skips `recordEvent` and its read of the
 * endpoints: the event would go nowhere. (Written out rather than with drizzle's columns, which an insert's
 * `returning` leaves unqualified: inside this subquery `user_id` would name the endpoint's own column.)
 */
export function hasEnabledEndpoint(table: string): SQL<boolean> {
  return hasEnabledEndpointOf(sql`${sql.identifier(table)}.user_id`);
}

/** Whether the account `userId` (a value, or a column of the statement) has an enabled endpoint. */
export function hasEnabledEndpointOf(userId: string | SQL): SQL<boolean> {
  return sql<boolean>`exists (select 1 from webhook_endpoints endpoint
    where endpoint.user_id = ${userId} and endpoint.enabled)`;
}

/** Writes the event and its deliveries; nothing when no endpoint wants it. Returns the delivery ids. */
export async function recordEvent(db: DbOrTx, event: NewEvent): Promise<string[]> {
  const endpoints = await db
    .select({ id: webhookEndpoints.id, events: webhookEndpoints.events })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.userId, event.userId),
        // A test event goes to the endpoint asked for, enabled or not.
        event.endpointId ? eq(webhookEndpoints.id, event.endpointId) : eq(webhookEndpoints.enabled, true),
      ),
    );
  const targets = endpoints.filter(
    (endpoint) => event.endpointId || !endpoint.events || endpoint.events.includes(event.type),
  );
  if (targets.length === 0) return [];
  const [written] = await db
    .insert(webhookEvents)
    .values({
      id: `msg_${newId()}`,
      userId: event.userId,
      type: event.type,
      resourceKind: event.kind,
      resource: snapshotOf(event.row),
      related: event.related ? (await event.related(db)).map(snapshotOf) : [],
    })
    .returning({ id: webhookEvents.id, seq: webhookEvents.seq });
  if (!written) throw new Error('insert into webhook_events returned no row');
  const deliveries = await db
    .insert(webhookDeliveries)
    .values(
      targets.map((endpoint) => ({
        id: newId(),
        endpointId: endpoint.id,
        eventId: written.id,
        eventSeq: written.seq,
      })),
    )
    .returning({ id: webhookDeliveries.id });
  return deliveries.map((delivery) => delivery.id);
}
