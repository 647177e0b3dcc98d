import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

/**
 * The `Idempotency-Key` header of the routes that move money (the four queued operations, a letter's creation):
 * one schema, so the document says the same of each.
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: '1 to 255 characters; a repeat returns the original 201' }),
  ),
});

/** Every value of the Idempotency-Key header as sent (`request.headers` has them joined into one). */
export function idempotencyKeysSent(request: FastifyRequest): string[] {
  const raw = request.raw.rawHeaders;
  const sent: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'idempotency-key') sent.push(raw[i + 1] as string);
  }
  return sent;
}
