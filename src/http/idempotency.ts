import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

/**
 * The `Idempotency-Key` header of the routes that move money (the four queued operations, a letter's creation):
 * one schema, so the document says the same of each.
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        '1 to 255 characters, without a comma; a repeat returns the original 201. Sent twice (two header lines, ' +
        'or two values joined by a comma in one) it is `400 validation_error`',
    }),
  ),
});

/**
 * Every value of the Idempotency-Key header as sent (`request.headers` has them joined into one). HTTP reads a line
 * of comma-separated values as those values on lines of their own (RFC 9110, 5.3), and a proxy may join two lines
 * into one that way: each comma-separated part counts as one value.
 */
export function idempotencyKeysSent(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const sent: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'idempotency-key')
      sent.push(...(raw[i + 1] as string).split(','));
  }
  return sent;
}
