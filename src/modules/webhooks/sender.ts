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
import { embeddedIpv4, isLoopbackAddress, plainAddress } from '../../lib/ip.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is read of an endpoint's answer (it is discarded): enough for a status line, never a flood. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** IANA's special-purpose addresses that are not globally reachable, and multicast: never a webhook's target. */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
// The forms that carry an IPv4 address (mapped, compatible, translated, NAT64's 64:ff9b::/96, 6to4) are judged by
// the address they carry (`embeddedIpv4`), so a public host behind NAT64 or 6to4 stays reachable.
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64: whatever it translates to is the operator's own network
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, …
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 segment identifiers
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed inside some networks)
  ['ff00::', 8], // multicast
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** Why an address may not be sent to, or null when it may. */
export function refusedAddress(address: string, allowLoopback: boolean): string | null {
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) is judged as the IPv4 address it is.
  const plain = plainAddress(address);
  if (!plain) return `${address} is not an IP address`;
  if (allowLoopback && isLoopbackAddress(address)) return null;
  if (nonPublic.check(plain.address, plain.family))
    return `${address} is a private, loopback, link-local or otherwise non-public address`;
  const hidden = embeddedIpv4(plain.address).find((ipv4) => nonPublic.check(ipv4, 'ipv4'));
  if (hidden)
    return `${address} carries ${hidden}, a private, loopback, link-local or otherwise non-public address`;
  return null;
}

/**
 * The `lookup` of a delivery's connection: every address the name resolves to is checked, and one refused address
 * refuses the name. `resolve` is Node's resolver (a test passes answers of its own).
 */
export function guardedLookup(
  allowLoopback: boolean,
  onLoopback: () => void,
  resolve: typeof dnsLookup = dnsLookup,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
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
