/** IP addresses as the service judges them: who is this machine itself (a local caller, a loopback target). */
import { BlockList, isIP } from 'node:net';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * An IP address as the family it really is: an IPv4 address written as IPv6 (`::ffff:10.0.0.1`, as a dual-stack
 * socket reports an IPv4 peer) is that IPv4 address. Null when `address` is not an IP address.
 */
export function plainAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const family = isIP(address);
  if (family === 0) return null;
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  return mapped ? { address: mapped, family: 'ipv4' } : { address, family: family === 4 ? 'ipv4' : 'ipv6' };
}

/** Whether an address is this machine's own: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x. */
export function isLoopbackAddress(address: string | undefined): boolean {
  const plain = address === undefined ? null : plainAddress(address);
  return plain !== null && loopback.check(plain.address, plain.family);
}
