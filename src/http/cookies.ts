import type { FastifyReply } from 'fastify';
import type { Deps } from '../deps.ts';
import { SESSION_COOKIE } from './auth.ts';

export function isHttpsOrigin(deps: Deps): boolean {
  return deps.config.publicOrigin.startsWith('https://');
}

/** The session cookie of a session just minted (signup, login, password change). */
export function setSessionCookie(
  reply: FastifyReply,
  deps: Deps,
  { token, expiresAt }: { token: string; expiresAt: Date },
): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttpsOrigin(deps),
    path: '/',
    expires: expiresAt,
  });
}

export function clearSessionCookie(reply: FastifyReply, deps: Deps): void {
  reply.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    secure: isHttpsOrigin(deps),
    path: '/',
  });
}
