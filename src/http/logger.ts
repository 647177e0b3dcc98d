import type { FastifyServerOptions } from 'fastify';

/**
 * Field names whose value is a secret whatever it holds, at any depth of a logged object. `code` is not one of
 * them: error codes are called `code` and must stay readable; a TOTP or claim code is caught by its field name
 * where it has its own (`claimCode`, `totpCode`) and by its shape below wherever else it travels.
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-sweep-secret',
  'password',
  'passwordHash',
  'currentPassword',
  'newPassword',
  'passphrase',
  'plaintext',
  'privateKey',
  'sealedPrivateKey',
  'claimCode',
  'claimCodeSealed',
  'claimUrl',
  'memo',
  'memoSealed',
  'totpCode',
  'secret',
  'totpSecret',
  'otpauthUrl',
  'pendingToken',
  'token',
  'tokenHash',
  'nota',
  // A wallet-key nota's encrypted key: in a log it would invite an offline guess at the passphrase.
  'ciphertext',
  'masterKey',
  'apiKey',
  'credential',
  // Parameter values of a failed query (Drizzle's DrizzleQueryError carries them).
  'params',
  'parameters',
]);

/** What secrets look like, wherever they appear inside a string (an error message, a URL, a stack). */
const SECRET_SHAPES: readonly RegExp[] = [
  /svc_sk_[A-Za-z0-9_-]+/g, // API keys
  /svc_session=[^;\s"',]+/g, // session cookies
  /\$argon2(?:id|i|d)\$[^\s"',]+/g, // password hashes
  /\bv1\.[0-9a-f]{12}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, // values sealed by the keyring (src/lib/secrets.ts)
  /whsec_[A-Za-z0-9+/=_-]+/g, // webhook signing secrets
  /otpauth:\/\/[^\s"',]+/g, // TOTP enrolment URLs (they carry the secret)
  /\b[0-9A-HJKMNP-TV-Z]{4}(?:[-\s][0-9A-HJKMNP-TV-Z]{4}){6}\b/gi, // claim codes, grouped
  /\b[0-9A-HJKMNP-TV-Z]{28}\b/gi, // claim codes, ungrouped
];

const CENSOR = '[redacted]';

/** Drizzle appends a failed query's parameter values to its message (and so to its stack): cut them off. */
function withoutParams(message: string): string {
  return message.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/, '');
}
const MAX_DEPTH = 8;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface Redactor {
  /** A copy of a logged object with every secret censored (by field name, by shape, by known value). */
  object(value: unknown): unknown;
  /** A string with every secret inside it censored. */
  text(value: string): string;
}

/**
 * Builds the redactor of one process. `knownSecrets` are the configured secret values (master key, provider
 * keys, the RPC URL that may carry an API key, the database password), censored wherever they appear.
 */
export function createRedactor(knownSecrets: readonly string[] = []): Redactor {
  const known = knownSecrets
    .filter((secret) => secret.length >= 8)
    .map((secret) => new RegExp(escapeRegExp(secret), 'g'));
  const shapes = [...known, ...SECRET_SHAPES];

  function text(value: string): string {
    let out = value;
    for (const shape of shapes) out = out.replace(shape, CENSOR);
    return out;
  }

  /**
   * Errors are logged by a whitelist of their fields: name, message and stack (censored, and cut before the
   * "params:" tail Drizzle appends to a failed query's message), the SQLSTATE and constraint of a database error,
   * and the cause chain; never parameter values, a driver's `detail` (which quotes the row) or anything else.
   */
  function error(value: Error, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {
      type: value.name || value.constructor?.name || 'Error',
      message: text(withoutParams(value.message ?? '')),
    };
    const fields = value as Error & Record<string, unknown>;
    for (const field of ['code', 'statusCode', 'constraint', 'table', 'column'] as const) {
      const item = fields[field];
      if (typeof item === 'string' || typeof item === 'number') out[field] = item;
    }
    if (value.stack) out.stack = text(withoutParams(value.stack));
    if (value.cause !== undefined && depth < 4) out.cause = walk(value.cause, depth + 1);
    return out;
  }

  function walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return text(value);
    if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
    if (value instanceof Error) return error(value, depth);
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    const prototype = Object.getPrototypeOf(value);
    // Anything else (a request, a reply) passes through whole to its pino serializer, which logs safe fields only.
    if (prototype !== Object.prototype && prototype !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = SECRET_FIELDS.has(key) ? CENSOR : walk(item, depth + 1);
    }
    return out;
  }

  return { object: (value) => walk(value, 0), text: (value) => text(withoutParams(value)) };
}

/** The secret values of a configuration, for `createRedactor`. */
export function configuredSecrets(config: {
  masterKey: string | null;
  sweepSecret: string | null;
  zamaApiKey: string | null;
  lobApiKey: string | null;
  operatorPrivateKey: string | null;
  rpcUrl: string | null;
  databaseUrl: string | null;
  smtpUrl?: string | null;
}): string[] {
  const secrets = [
    config.masterKey,
    config.sweepSecret,
    config.zamaApiKey,
    config.lobApiKey,
    config.operatorPrivateKey,
    // An RPC URL often carries the provider's key in its path or query; RPC_URL may list several providers.
    config.rpcUrl,
    ...(config.rpcUrl ?? '').split(',').map((url) => url.trim()),
  ];
  // Connection URLs carry a password: the URL and the password alone are both censored.
  for (const url of [config.databaseUrl, config.smtpUrl ?? null]) {
    if (!url) continue;
    try {
      const password = decodeURIComponent(new URL(url).password);
      secrets.push(password || null, url);
    } catch {
      secrets.push(url);
    }
  }
  return secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
}

export function loggerOptions(
  level: string,
  redactor: Redactor = createRedactor(),
): FastifyServerOptions['logger'] {
  return {
    level,
    // Redaction runs only when a line is written; pino's path-based `redact` cost a quarter of every request's
    // CPU, logged or not, because it also runs on each request's child logger.
    formatters: { log: (object) => redactor.object(object) as Record<string, unknown> },
    hooks: {
      // Messages are censored too, and an error logged on its own (`log.error(error)`) is logged as `{err}` with
      // a censored message instead of pino taking its raw message (a failed query's parameters) as the line.
      logMethod(args, method) {
        const [first, ...rest] = args as unknown[];
        if (first instanceof Error) {
          const message = typeof rest[0] === 'string' ? rest[0] : first.message;
          return method.apply(this, [{ err: first }, redactor.text(message)] as never);
        }
        const censored = (args as unknown[]).map((arg) =>
          typeof arg === 'string' ? redactor.text(arg) : arg,
        );
        return method.apply(this, censored as never);
      },
    },
    serializers: {
      // The URL can carry a preview code in its query: log the path only, never headers.
      req: (req: { method: string; url: string; id: string }) => ({
        id: req.id,
        method: req.method,
        path: redactor.text(req.url.split('?')[0] ?? ''),
      }),
      // `formatters.log` has already turned errors into whitelisted plain objects; an error logged another way
      // (pino's `logger.error(error)`) still goes through the same whitelist.
      err: ((err: unknown) => (err instanceof Error ? redactor.object(err) : err)) as never,
    },
  };
}
