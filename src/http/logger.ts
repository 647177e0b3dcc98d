import type { FastifyServerOptions } from 'fastify';

/**
 * Every secret the service handles, wherever it could appear in a logged object. Add new secrets here as they
 * are introduced: credentials, wallet keys, claim codes, TOTP secrets and codes, passphrases, key files.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-sweep-secret"]',
  'res.headers["set-cookie"]',
  ...[
    'password',
    'currentPassword',
    'newPassword',
    'passphrase',
    'plaintext',
    'privateKey',
    'sealedPrivateKey',
    'claimCode',
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
  ].flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
];

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      // The URL can carry a preview code in its query: log the path only.
      req: (req: { method: string; url: string; id: string }) => ({
        id: req.id,
        method: req.method,
        path: req.url.split('?')[0],
      }),
    },
  };
}
