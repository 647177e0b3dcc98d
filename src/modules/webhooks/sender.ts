/**
 * One webhook POST, guarded against server-side request forgery: the address the host name resolves to is checked
 * when the socket connects (the `lookup` the connection itself uses), so a name that resolves to a public address
 * when the endpoint is registered and to an internal one later (DNS rebinding) is refused at send time. Private,
 * loopback, link-local and other non-public addresses are refused; the sandbox allows loopback so developers can
 * receive on their own machine. Redirects are not followed (a 3xx is a failed attempt); 10 s is the whole budget.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { isLoopbackAddress, plainAddress } from '../../lib/ip.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is read of an endpoint's answer (it is discarded): enough for a status line, never a flood. */
const MAX_RESPONSE_BYTES = 64 * 1024;

const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** Why an address may not be sent to, or null when it may. */
export function refusedAddress(address: string, allowLoopback: boolean): string | null {
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const plain = plainAddress(address);
  if (!plain) return `${address} is not an IP address`;
  if (allowLoopback && isLoopbackAddress(address)) return null;
  if (nonPublic.check(plain.address, plain.family))
    return `${address} is a private, loopback or link-local address`;
  return null;
}

function guardedLookup(allowLoopback: boolean, onLoopback: () => void): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (addresses.some((entry) => isLoopbackAddress(entry.address))) onLoopback();
      const refused = addresses.map((entry) => refusedAddress(entry.address, allowLoopback)).find(Boolean);
      if (refused || addresses.length === 0) {
        return callback(new Error(`refused: ${refused ?? `${hostname} resolved to nothing`}`), '', 0);
      }
      if (options.all) return callback(null, addresses);
      const [first] = addresses as [LookupAddress];
      return callback(null, first.address, first.family);
    });
  };
}

export interface SendOutcome {
  statusCode: number | null;
  durationMs: number;
  /** Null on a 2xx. */
  error: string | null;
  /** The target was this machine (a literal loopback address, or a name that resolved to one). */
  loopback: boolean;
}

export function postWebhook(params: {
  url: string;
  headers: Record<string, string>;
  body: string;
  allowLoopback: boolean;
  timeoutMs?: number;
}): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(params.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let loopback = isLoopbackAddress(host);
  // A literal address is connected to without a lookup: check it here.
  if (isIP(host)) {
    const refused = refusedAddress(host, params.allowLoopback);
    if (refused)
      return Promise.resolve({
        statusCode: null,
        durationMs: elapsed(),
        error: `refused: ${refused}`,
        loopback,
      });
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, 'durationMs' | 'loopback'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: elapsed(), loopback });
    };
    const request = send(
      url,
      {
        method: 'POST',
        headers: {
          ...params.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(params.body).toString(),
          'user-agent': 'sealpay-webhooks/1',
        },
        lookup: guardedLookup(params.allowLoopback, () => {
          loopback = true;
        }),
        // One connection per attempt: a kept-alive socket would skip the address check of the next one.
        agent: false,
      },
      (response) => {
        const statusCode = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const done = () =>
          finish({
            statusCode,
            error: statusCode >= 200 && statusCode < 300 ? null : `the endpoint answered ${statusCode}`,
          });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({
        statusCode: null,
        error: `no answer within ${(params.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000} s`,
      });
    }, params.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    request.on('error', (error) => finish({ statusCode: null, error: error.message }));
    request.end(params.body);
  });
}
