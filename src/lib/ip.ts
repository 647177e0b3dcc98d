/** IP addresses as the service judges them: who is this machine itself (a local caller, a loopback target). */
import { BlockList, isIP } from 'node:net';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * The 16 bytes of an IPv6 address, in any of its written forms (`::`, a trailing dotted IPv4 `::ffff:1.2.3.4`).
 * Null when `address` is not an IPv6 address.
 */
export function ipv6Bytes(address: string): Uint8Array | null {
  if (isIP(address) !== 6) return null;
  // A zone (`fe80::1%eth0`) names an interface, not part of the address.
  let text = address.split('%')[0] ?? '';
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

const ipv4At = (bytes: Uint8Array, at: number): string => [...bytes.subarray(at, at + 4)].join('.');

/** Whether the first `length` bytes of `bytes` are `prefix`. */
const startsWith = (bytes: Uint8Array, prefix: readonly number[]): boolean =>
  prefix.every((byte, i) => bytes[i] === byte);

const ZEROS_80 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] as const;

/**
 * The IPv4 addresses an IPv6 address carries, and which a connection to it may reach: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated, still tunnelled by some stacks), IPv4-translated
 * (`::ffff:0:a.b.c.d`, SIIT), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`). Empty for every other
 * address, and for anything that is not an IPv6 address.
 */
export function embeddedIpv4(address: string): string[] {
  const bytes = ipv6Bytes(address);
  if (!bytes) return [];
  if (startsWith(bytes, [...ZEROS_80, 0xff, 0xff])) return [ipv4At(bytes, 12)];
  if (startsWith(bytes, [...ZEROS_80, 0, 0])) return [ipv4At(bytes, 12)];
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return [ipv4At(bytes, 12)];
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...ZEROS_80.slice(0, 8)])) return [ipv4At(bytes, 12)];
  if (startsWith(bytes, [0x20, 0x02])) return [ipv4At(bytes, 2)];
  return [];
}

/**
 * An IP address as the family it really is: an IPv4 address written as IPv6 (`::ffff:10.0.0.1`, as a dual-stack
 * socket reports an IPv4 peer, or `::ffff:a00:1`, as a URL writes it) is that IPv4 address. Null when `address` is
 * not an IP address.
 */
export function plainAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const family = isIP(address);
  if (family === 0) return null;
  if (family === 4) return { address, family: 'ipv4' };
  const bytes = ipv6Bytes(address);
  return bytes && startsWith(bytes, [...ZEROS_80, 0xff, 0xff])
    ? { address: ipv4At(bytes, 12), family: 'ipv4' }
    : { address, family: 'ipv6' };
}

/** Whether an address is this machine's own: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x. */
export function isLoopbackAddress(address: string | undefined): boolean {
  const plain = address === undefined ? null : plainAddress(address);
  return plain !== null && loopback.check(plain.address, plain.family);
}

/**
 * Whether a host name names this machine: `localhost` and its subdomains (RFC 6761: resolved to the loopback, never
 * asked of DNS), or a loopback address (`127.0.0.1`, `[::1]`, brackets or not).
 */
export function isLoopbackName(name: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, '');
  return (
    host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(host.replace(/^\[(.*)\]$/, '$1'))
  );
}
