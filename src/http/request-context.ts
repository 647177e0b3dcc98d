import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackAddress } from '../lib/ip.ts';
import type { RequestContext } from '../lib/request-context.ts';
import { rateLimitHeaders } from './rate-limit.ts';

/** The plain values a service gets of a request (never the request or the reply themselves). */
export function requestContext(request: FastifyRequest, reply: FastifyReply): RequestContext {
  return { ip: request.ip, rateLimits: rateLimitHeaders(reply), log: request.log };
}

/** Headers a proxy adds when it relays someone else's request (`Forwarded`, RFC 7239, and its customary kin). */
const RELAYED_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip', 'via'] as const;

/**
 * Whether the request comes straight from the machine the service runs on: its TCP peer (the socket's, never
 * `request.ip`, whatever `TRUST_PROXY` says) is a loopback address, and it carries no header a proxy adds (a proxy
 * on this machine relaying a stranger's request connects from the loopback too).
 */
export function isFromThisMachine(request: FastifyRequest): boolean {
  return (
    isLoopbackAddress(request.socket.remoteAddress) &&
    RELAYED_HEADERS.every((name) => request.headers[name] === undefined)
  );
}
