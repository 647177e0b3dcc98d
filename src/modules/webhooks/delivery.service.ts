/**
 * The worker's webhook step: leases due deliveries from the outbox (src/db/events.ts writes them with each
 * change), renders the event as the API shows the resource, signs it (Standard Webhooks) and sends it. At least
 * once: a crash between the send and its record sends it again, under the same `webhook-id`. A failed attempt is
 * retried with exponential backoff and jitter for 3 days from the event; then the delivery is FAILED and the
 * endpoint marked failing (until its next success).
 */
import { rowOf } from '../../db/events.ts';
import {
  letters,
  transactions,
  type WebhookDeliveryRow,
  type WebhookEventRow,
  wallets,
} from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { type Backoff, backoffMs } from '../../lib/backoff.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../lib/logger.ts';
import { startPollingLoop } from '../../worker/polling-loop.ts';
import { toLetter } from '../letters/letters.schema.ts';
import { toTransaction } from '../transactions/transactions.schema.ts';
import { toWallet } from '../wallets/wallets.schema.ts';
import { postWebhook, type SendOutcome } from './sender.ts';
import { signedHeaders } from './signing.ts';
import {
  clearEndpointFailing,
  findEndpointById,
  findEventById,
  insertAttempt,
  leaseDueDeliveries,
  markEndpointFailing,
  releaseDeliveryLeases,
  updateLeasedDelivery,
} from './webhooks.repository.ts';
import { signingSecrets } from './webhooks.service.ts';

const RETRY_HORIZON_MS = 3 * 24 * 60 * 60 * 1000;
/** A delivery's retries: 5 s, 15 s, 45 s, … up to 6 h (src/lib/backoff.ts). */
const RETRY: Backoff = { firstMs: 5_000, factor: 3, maxMs: 6 * 60 * 60 * 1000 };

/**
 * The event's `data`: its resource as the API shows it, by the API's own mappers, from the row (and the rows its view
 * shows beside it) as they were when the event was written. A letter is shown as to its sender, without the claim
 * code (never copied into an event): its amount and memo stay sealed until the claim.
 */
export function eventData(deps: Deps, event: WebhookEventRow): unknown {
  switch (event.resourceKind) {
    case 'transaction':
      return toTransaction(rowOf(transactions, event.resource), deps.network);
    case 'wallet':
      return toWallet(rowOf(wallets, event.resource));
    case 'letter': {
      const legs = new Map(
        event.related.map((snapshot) => rowOf(transactions, snapshot)).map((row) => [row.id, row]),
      );
      return toLetter(rowOf(letters, event.resource), legs, deps.keyring, deps.network, {
        showClaimCode: false,
        apiOrigin: deps.config.publicOrigin,
      });
    }
    case 'test':
      return { message: 'A test event from sealpay: your endpoint is reachable and verifies signatures.' };
  }
}

/** The body of every delivery of an event: the same bytes on every retry. */
export function eventBody(deps: Deps, event: WebhookEventRow): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: eventData(deps, event),
  });
}

/**
 * What is recorded of an attempt (and shown by `GET /webhooks/{id}/deliveries`). Of an attempt at this machine
 * itself (a loopback target, allowed in the sandbox only) only whether it succeeded: its status, error text and
 * timing would tell a user which local ports answer and what, a port scan of the service's host.
 */
function recordedOutcome(outcome: SendOutcome, loopbackAllowed: boolean): Omit<SendOutcome, 'loopback'> {
  // Where loopback is refused (production), nothing reached the port: the refusal itself is worth telling.
  if (!outcome.loopback || !loopbackAllowed) return outcome;
  return {
    statusCode: null,
    durationMs: 0,
    error: outcome.error === null ? null : 'the delivery failed (no detail is kept for a loopback address)',
  };
}

/** Sends one leased delivery once and records the attempt. */
export async function attemptDelivery(deps: Deps, delivery: WebhookDeliveryRow): Promise<void> {
  const { db } = deps.database;
  const [endpoint, event] = await Promise.all([
    findEndpointById(db, delivery.endpointId),
    findEventById(db, delivery.eventId),
  ]);
  if (!endpoint || !event) return;
  const body = eventBody(deps, event);
  const allowLoopback = deps.config.environment !== 'production';
  // Signed at real time, not the test clock's: a receiver checks `webhook-timestamp` against its own clock (Standard
  // Webhooks: within 5 minutes), and the test clock, once moved, never comes back.
  const signedAt = deps.wallClock.now();
  const outcome = endpoint.enabled
    ? recordedOutcome(
        await postWebhook({
          url: endpoint.url,
          body,
          headers: signedHeaders(signingSecrets(deps, endpoint), { id: event.id, timestamp: signedAt, body }),
          allowLoopback,
        }),
        allowLoopback,
      )
    : { statusCode: null, durationMs: 0, error: 'the endpoint is disabled' };
  const after = deps.clock.now();
  const attempts = delivery.attempts + 1;
  await db.transaction(async (tx) => {
    if (outcome.error === null) {
      const moved = await updateLeasedDelivery(tx, delivery, {
        status: 'SUCCEEDED',
        attempts,
        lastStatusCode: outcome.statusCode,
        lastError: null,
        deliveredAt: after,
        leaseOwner: null,
        leaseUntil: null,
      });
      if (!moved) return;
      await clearEndpointFailing(tx, endpoint.id);
    } else {
      const givingUp =
        !endpoint.enabled || after.getTime() >= delivery.createdAt.getTime() + RETRY_HORIZON_MS;
      const moved = await updateLeasedDelivery(tx, delivery, {
        status: givingUp ? 'FAILED' : 'PENDING',
        attempts,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        nextAttemptAt: new Date(after.getTime() + backoffMs(RETRY, attempts - 1)),
        leaseOwner: null,
        leaseUntil: null,
      });
      if (!moved) return;
      if (givingUp && endpoint.enabled) await markEndpointFailing(tx, endpoint.id, after);
    }
    await insertAttempt(tx, {
      deliveryId: delivery.id,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      error: outcome.error,
    });
  });
}

/** Leases what is due and sends it, up to the worker's concurrency at once; returns how many were sent. */
export async function deliverDue(deps: Deps, owner: string, logger: Logger): Promise<number> {
  const now = deps.clock.now();
  const leased = await leaseDueDeliveries(
    deps.database.db,
    owner,
    now,
    new Date(now.getTime() + deps.config.worker.leaseMs),
    deps.config.worker.concurrency,
  );
  await Promise.all(
    leased.map((delivery) =>
      attemptDelivery(deps, delivery).catch((error: unknown) =>
        logger.error({ err: error, deliveryId: delivery.id }, 'webhook delivery crashed'),
      ),
    ),
  );
  return leased.length;
}

/** The delivery loop beside the transaction worker; returns its stopper. */
export async function startWebhookDelivery(deps: Deps, logger: Logger): Promise<() => Promise<void>> {
  const owner = `webhooks-${newId()}`;
  // The embedded database is one process's: at start, every lease in it belongs to a process that is gone.
  if (deps.database.kind === 'pglite') await releaseDeliveryLeases(deps.database.db);
  return startPollingLoop({
    round: () => deliverDue(deps, owner, logger),
    pollMs: deps.config.worker.pollMs,
    logger,
    failureMessage: 'leasing webhook deliveries failed',
  });
}
