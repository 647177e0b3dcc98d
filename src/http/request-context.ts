import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../lib/request-context.ts';
import { rateLimitHeaders } from './rate-limit.ts';

/** The plain values a service gets of a request (never the request or the reply themselves). */
export function requestContext(request: FastifyRequest, reply: FastifyReply): RequestContext {
  return { ip: request.ip, rateLimits: rateLimitHeaders(reply), log: request.log };
}
