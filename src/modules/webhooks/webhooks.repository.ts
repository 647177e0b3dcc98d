import { and, asc, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.ts';
import { leaseDue } from '../../db/lease.ts';
import { serviceNow } from '../../db/schema/columns.ts';
import {
  type NewWebhookEndpoint,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  type WebhookEventRow,
  webhookAttempts,
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
} from '../../db/schema/index.ts';
import { newId } from '../../lib/ids.ts';

export async function insertEndpoint(db: DbOrTx, values: NewWebhookEndpoint): Promise<WebhookEndpointRow> {
  const [row] = await db.insert(webhookEndpoints).values(values).returning();
  if (!row) throw new Error('insert into webhook_endpoints returned no row');
  return row;
}

export async function countEndpoints(db: DbOrTx, userId: string): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.userId, userId));
  return Number(row?.total ?? 0);
}

export function listEndpoints(db: DbOrTx, userId: string): Promise<WebhookEndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.userId, userId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
}

export async function findOwnEndpoint(
  db: DbOrTx,
  userId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.userId, userId)))
    .limit(1);
  return row;
}

export async function updateEndpoint(
  db: DbOrTx,
  id: string,
  values: Partial<NewWebhookEndpoint>,
): Promise<WebhookEndpointRow> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...values, updatedAt: values.updatedAt ?? serviceNow })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  if (!row) throw new Error(`webhook endpoint ${id} vanished`);
  return row;
}

/** Deletes an endpoint; its deliveries and their attempts go with it (the events stay: others may hold them). */
export async function deleteEndpoint(db: DbOrTx, id: string): Promise<void> {
  await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
}

export async function findDelivery(
  db: DbOrTx,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.endpointId, endpointId)))
    .limit(1);
  return row;
}

/** A new delivery of an event already sent (a replay): the same event, so the same `webhook-id`. */
export async function insertDelivery(
  db: DbOrTx,
  delivery: Pick<WebhookDeliveryRow, 'endpointId' | 'eventId' | 'eventSeq'>,
): Promise<WebhookDeliveryRow> {
  const [row] = await db
    .insert(webhookDeliveries)
    .values({
      id: newId(),
      endpointId: delivery.endpointId,
      eventId: delivery.eventId,
      eventSeq: delivery.eventSeq,
    })
    .returning();
  if (!row) throw new Error('insert into webhook_deliveries returned no row');
  return row;
}

export interface DeliveryListing {
  delivery: WebhookDeliveryRow;
  event: WebhookEventRow;
  attempts: WebhookAttemptRow[];
}

/** An endpoint's deliveries, newest first, each with its event and attempts. */
export async function listDeliveries(
  db: DbOrTx,
  endpointId: string,
  page: number,
  pageSize: number,
): Promise<{ items: DeliveryListing[]; total: number }> {
  const where = eq(webhookDeliveries.endpointId, endpointId);
  const [found, [counted]] = await Promise.all([
    db
      .select({ delivery: webhookDeliveries, event: webhookEvents })
      .from(webhookDeliveries)
      .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(
        desc(webhookDeliveries.createdAt),
        desc(webhookDeliveries.eventSeq),
        desc(webhookDeliveries.id),
      )
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ total: count() }).from(webhookDeliveries).where(where),
  ]);
  const attempts = await attemptsOf(
    db,
    found.map((row) => row.delivery.id),
  );
  return {
    items: found.map((row) => ({ ...row, attempts: attempts.get(row.delivery.id) ?? [] })),
    total: Number(counted?.total ?? 0),
  };
}

export async function attemptsOf(
  db: DbOrTx,
  deliveryIds: string[],
): Promise<Map<string, WebhookAttemptRow[]>> {
  const byDelivery = new Map<string, WebhookAttemptRow[]>();
  if (deliveryIds.length === 0) return byDelivery;
  const found = await db
    .select()
    .from(webhookAttempts)
    .where(inArray(webhookAttempts.deliveryId, deliveryIds))
    .orderBy(asc(webhookAttempts.attemptedAt), asc(webhookAttempts.id));
  for (const attempt of found) {
    const list = byDelivery.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.deliveryId, list);
  }
  return byDelivery;
}

// ---------------------------------------------------------------------------------------------------------------
// The delivery queue (the worker's side)

/**
 * Leases up to `limit` due deliveries to `owner` (SKIP LOCKED: two workers never take one). Per endpoint, only its
 * oldest due delivery is taken, and none while another of the endpoint's is in flight: a healthy endpoint gets
 * its events in the order they happened; one that fails does not hold the others back past its own retry.
 */
export async function leaseDueDeliveries(
  db: DbOrTx,
  owner: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  const at = now.toISOString();
  const leased = await leaseDue(db, webhookDeliveries, {
    set: sql`lease_owner = ${owner}, lease_until = ${leaseUntil.toISOString()}`,
    due: sql`q.status = 'PENDING'
            and q.next_attempt_at <= ${at}
            and not exists (
              select 1 from webhook_deliveries o
              where o.endpoint_id = q.endpoint_id and o.status = 'PENDING' and o.id <> q.id
                and (
                  (o.lease_until is not null and o.lease_until >= ${at})
                  or (o.next_attempt_at <= ${at} and (o.event_seq, o.created_at) < (q.event_seq, q.created_at))
                ))`,
    orderBy: sql`q.event_seq`,
    now,
    limit,
  });
  return leased.sort((a, b) => a.eventSeq - b.eventSeq);
}

export async function findEndpointById(db: DbOrTx, id: string): Promise<WebhookEndpointRow | undefined> {
  const [row] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).limit(1);
  return row;
}

export async function findEventById(db: DbOrTx, id: string): Promise<WebhookEventRow | undefined> {
  const [row] = await db.select().from(webhookEvents).where(eq(webhookEvents.id, id)).limit(1);
  return row;
}

export async function insertAttempt(
  db: DbOrTx,
  attempt: Pick<WebhookAttemptRow, 'deliveryId' | 'statusCode' | 'durationMs' | 'error'>,
): Promise<void> {
  await db.insert(webhookAttempts).values({ id: newId(), ...attempt });
}

/** Moves a delivery this owner holds (its lease guards the move); false when the lease was taken over. */
export async function updateLeasedDelivery(
  db: DbOrTx,
  delivery: Pick<WebhookDeliveryRow, 'id' | 'leaseOwner'>,
  values: Partial<Omit<WebhookDeliveryRow, 'id'>>,
): Promise<boolean> {
  const moved = await db
    .update(webhookDeliveries)
    .set({ ...values, updatedAt: serviceNow })
    .where(
      and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.leaseOwner, delivery.leaseOwner ?? '')),
    )
    .returning({ id: webhookDeliveries.id });
  return moved.length > 0;
}

/** Releases every delivery lease (the embedded database at start: their owners are gone). */
export async function releaseDeliveryLeases(db: DbOrTx): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ leaseOwner: null, leaseUntil: null })
    .where(sql`${webhookDeliveries.leaseOwner} is not null`);
}

export async function markEndpointFailing(db: DbOrTx, id: string, since: Date): Promise<void> {
  await db
    .update(webhookEndpoints)
    .set({ failingSince: since })
    .where(and(eq(webhookEndpoints.id, id), sql`${webhookEndpoints.failingSince} is null`));
}

export async function clearEndpointFailing(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(webhookEndpoints)
    .set({ failingSince: null })
    .where(and(eq(webhookEndpoints.id, id), sql`${webhookEndpoints.failingSince} is not null`));
}
