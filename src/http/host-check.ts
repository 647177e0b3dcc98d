/**
 * Which names the service answers to. A page on attacker.example whose name its DNS then points at 127.0.0.1 (DNS
 * rebinding) reaches a service bound to the loopback as a same-origin page of its own, and its requests carry
 * `Host: attacker.example`: the browser's only tell. Bound to the loopback, the service therefore answers a request
 * only when its `Host` is the public origin's host or a loopback name (any port); every other request, on every
 * route, is `421 misdirected_request`. Bound to another address, a proxy in front may name the service as it likes,
 * so every `Host` is served, except that the local mailbox still reads only to those names (its local read trusts
 * the loopback peer, which a rebound page also is).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { AppError } from '../lib/errors.ts';
import { isLoopbackName } from '../lib/ip.ts';

/** The name of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased; null when malformed. */
function hostNameOf(header: string): string | null {
  const name = /^(\[[0-9a-f:.]+\]|[^\s:@/[\]]+)(?::\d*)?$/i.exec(header.trim())?.[1];
  return name ? name.toLowerCase().replace(/\.$/, '') : null;
}

/**
 * Whether a request names this service: its `Host` is the public origin's host or a loopback name. A request
 * without `Host` (HTTP/1.0; an HTTP/1.1 one is refused on arrival) names nothing a browser could have rebound.
 */
export function isAddressedToUs(request: FastifyRequest, publicOrigin: string): boolean {
  const header = request.headers.host;
  if (header === undefined) return true;
  const name = hostNameOf(header);
  const origin = new URL(publicOrigin).hostname.replace(/\.$/, '');
  return name !== null && (name === origin || isLoopbackName(name));
}

/** Refuses, on every route, a request to another name while the service is bound to the loopback. */
export function installHostCheck(app: FastifyInstance, config: Pick<Config, 'host' | 'publicOrigin'>): void {
  if (!isLoopbackName(config.host)) return;
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isAddressedToUs(request, config.publicOrigin)) {
      throw new AppError(
        'misdirected_request',
        'This service answers only to its public origin and to loopback names (localhost, 127.0.0.1, [::1]); ' +
          'to use it under another name, set PUBLIC_ORIGIN to it.',
      );
    }
    done();
  });
}
