import { isIP } from 'node:net';
import { recordEvent } from '../../db/events.ts';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookEventRow } from '../../db/schema/index.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { lockUser } from '../accounts/accounts.repository.ts';
import { refusedAddress } from './sender.ts';
import { generateWebhookSecret } from './signing.ts';
import {
  countEndpoints,
  deleteEndpoint,
  findDelivery,
  findEventById,
  findOwnEndpoint,
  insertDelivery,
  insertEndpoint,
  updateEndpoint,
} from './webhooks.repository.ts';

export const MAX_WEBHOOK_ENDPOINTS = 10;
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

/** The keyring context binds a sealed secret to its endpoint: a sealed value moved to another row does not open. */
function secretContext(endpointId: string): string {
  return `webhook-secret:${endpointId}`;
}

/** The secrets that sign now: the current one, and the one it replaced during its 24 hours of overlap. */
export function signingSecrets(deps: Deps, endpoint: WebhookEndpointRow): string[] {
  const secrets = [deps.keyring.openText(endpoint.secretSealed, secretContext(endpoint.id))];
  if (
    endpoint.previousSecretSealed &&
    endpoint.previousSecretExpiresAt &&
    endpoint.previousSecretExpiresAt > deps.clock.now()
  ) {
    secrets.push(deps.keyring.openText(endpoint.previousSecretSealed, secretContext(endpoint.id)));
  }
  return secrets;
}

/**
 * An endpoint URL the service will send to: https (http too in the sandbox), no credentials in it, and on
 * production no host that names a non-public address outright. Names are checked again at every send, against
 * what they resolve to then.
 */
export function checkEndpointUrl(deps: Deps, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('invalid_webhook_url', 'The URL is not a valid absolute URL.');
  }
  const production = deps.config.environment === 'production';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !production)) {
    throw new AppError(
      'invalid_webhook_url',
      production ? 'Webhook URLs must use https.' : 'Webhook URLs must use https (or http in the sandbox).',
    );
  }
  if (url.username || url.password) {
    throw new AppError('invalid_webhook_url', 'A webhook URL may not carry a user name or password.');
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const refused = isIP(host) ? refusedAddress(host, !production) : null;
  if (refused || (production && (host === 'localhost' || host.endsWith('.localhost')))) {
    throw new AppError(
      'invalid_webhook_url',
      `Webhooks cannot be sent to ${host}: it is not a public address.`,
    );
  }
  return url.toString();
}

export interface WebhookInput {
  url?: string | undefined;
  events?: string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

/** Registers an endpoint; its secret is returned here once (it is kept sealed, to sign with). */
export async function createWebhook(
  deps: Deps,
  userId: string,
  input: WebhookInput & { url: string },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const url = checkEndpointUrl(deps, input.url);
  const secret = generateWebhookSecret();
  const id = newId();
  const endpoint = await deps.database.db.transaction(async (tx) => {
    // Serializes creation per account so two concurrent requests cannot both take the tenth place.
    await lockUser(tx, userId);
    if ((await countEndpoints(tx, userId)) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError(
        'webhook_limit_reached',
        `An account can have ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints. Delete one first.`,
      );
    }
    return insertEndpoint(tx, {
      id,
      userId,
      url,
      description: input.description ?? null,
      events: input.events && input.events.length > 0 ? [...new Set(input.events)] : null,
      secretSealed: deps.keyring.seal(secret, secretContext(id)),
    });
  });
  return { endpoint, secret };
}

export async function ownEndpoint(deps: Deps, userId: string, id: string): Promise<WebhookEndpointRow> {
  const endpoint = await findOwnEndpoint(deps.database.db, userId, id);
  if (!endpoint) throw new AppError('not_found', 'No such webhook endpoint.');
  return endpoint;
}

export async function updateWebhook(
  deps: Deps,
  userId: string,
  id: string,
  input: WebhookInput,
): Promise<WebhookEndpointRow> {
  await ownEndpoint(deps, userId, id);
  return updateEndpoint(deps.database.db, id, {
    ...(input.url !== undefined ? { url: checkEndpointUrl(deps, input.url) } : {}),
    ...(input.events !== undefined
      ? { events: input.events.length > 0 ? [...new Set(input.events)] : null }
      : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
  });
}

export async function deleteWebhook(deps: Deps, userId: string, id: string): Promise<WebhookEndpointRow> {
  const endpoint = await ownEndpoint(deps, userId, id);
  await deleteEndpoint(deps.database.db, id);
  return endpoint;
}

/** A new secret, returned once; the old one keeps signing beside it for 24 hours, so receivers can switch over. */
export async function rotateWebhookSecret(
  deps: Deps,
  userId: string,
  id: string,
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const current = await ownEndpoint(deps, userId, id);
  const secret = generateWebhookSecret();
  const endpoint = await updateEndpoint(deps.database.db, id, {
    secretSealed: deps.keyring.seal(secret, secretContext(id)),
    previousSecretSealed: current.secretSealed,
    previousSecretExpiresAt: new Date(deps.clock.now().getTime() + PREVIOUS_SECRET_MS),
  });
  return { endpoint, secret };
}

/** Queues a `webhook.test` event for this endpoint alone. */
export async function sendTestEvent(deps: Deps, userId: string, id: string): Promise<WebhookDeliveryRow> {
  const endpoint = await ownEndpoint(deps, userId, id);
  const [deliveryId] = await recordEvent(deps.database.db, {
    userId,
    type: 'webhook.test',
    kind: 'test',
    row: { endpointId: endpoint.id, sentAt: deps.clock.now() },
    endpointId: endpoint.id,
  });
  const delivery = deliveryId ? await findDelivery(deps.database.db, endpoint.id, deliveryId) : undefined;
  if (!delivery) throw new Error('the test delivery was not written');
  return delivery;
}

/** Sends a delivered (or failed) event again: a new delivery of the same event, so the same `webhook-id`. */
export async function replayDelivery(
  deps: Deps,
  userId: string,
  id: string,
  deliveryId: string,
): Promise<{ delivery: WebhookDeliveryRow; event: WebhookEventRow }> {
  const endpoint = await ownEndpoint(deps, userId, id);
  const original = await findDelivery(deps.database.db, endpoint.id, deliveryId);
  const event = original ? await findEventById(deps.database.db, original.eventId) : undefined;
  if (!original || !event) throw new AppError('not_found', 'No such delivery.');
  return { delivery: await insertDelivery(deps.database.db, original), event };
}
