/**
 * Standard Webhooks (standardwebhooks.com) signatures: secrets are `whsec_` and 24 random bytes in base64; a
 * delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated
 * list of `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, one per secret that currently signs.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

function signOne(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The three headers of one delivery attempt, signed by every secret given (the current one first). */
export function signedHeaders(
  secrets: string[],
  message: { id: string; timestamp: Date; body: string },
): Record<string, string> {
  const seconds = Math.floor(message.timestamp.getTime() / 1000).toString();
  const content = `${message.id}.${seconds}.${message.body}`;
  return {
    'webhook-id': message.id,
    'webhook-timestamp': seconds,
    'webhook-signature': secrets.map((secret) => signOne(secret, content)).join(' '),
  };
}
