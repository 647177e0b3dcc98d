import type { FastifyServerOptions } from 'fastify';

/**
 * Every secret the service handles, by field name, wherever it appears in a logged object (at any depth). Add new
 * secrets here as they are introduced: credentials, wallet keys, claim codes, TOTP secrets and codes,
 * passphrases, key files.
 */
export const REDACTED_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-sweep-secret',
  'password',
  'currentPassword',
  'newPassword',
  'passphrase',
  'plaintext',
  'privateKey',
  'sealedPrivateKey',
  'claimCode',
  'claimUrl',
  'code',
  'secret',
  'totpSecret',
  'otpauthUrl',
  'pendingToken',
  'token',
  'nota',
  // A wallet-key nota's encrypted key: in a log it would invite an offline guess at the passphrase.
  'ciphertext',
  'masterKey',
  'apiKey',
  'credential',
]);

const CENSOR = '[redacted]';
const MAX_DEPTH = 8;

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A copy of `value` with every secret field censored, through plain objects and arrays. Anything else (a request,
 * a reply, an error) passes through whole to its pino serializer, which logs only safe fields.
 */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = REDACTED_KEYS.has(key) ? CENSOR : redactSecrets(item, depth + 1);
  }
  return out;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // Redaction runs only when a line is written; pino's path-based `redact` cost a quarter of every request's
    // CPU, logged or not, because it also runs on each request's child logger.
    formatters: { log: (object) => redactSecrets(object) as Record<string, unknown> },
    serializers: {
      // The URL can carry a preview code in its query: log the path only, never headers.
      req: (req: { method: string; url: string; id: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
      }),
    },
  };
}
