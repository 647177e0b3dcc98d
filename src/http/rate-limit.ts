import type { FastifyReply } from 'fastify';
import { type RateLimitReporter, secondsUntilReset } from '../lib/rate-limit.ts';

/**
 * A budget's state as the answer's RateLimit-* headers (the `Retry-After` of a spent budget is set by the error
 * handler, from the error's `details.retryAfter`).
 */
export function rateLimitHeaders(reply: FastifyReply): RateLimitReporter {
  return {
    report(limit, hit, now) {
      reply.header('RateLimit-Limit', limit.max);
      reply.header('RateLimit-Remaining', Math.max(0, limit.max - hit.count));
      reply.header('RateLimit-Reset', secondsUntilReset(hit, now));
    },
  };
}
