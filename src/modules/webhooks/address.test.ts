/**
 * The webhook address check against every way IPv6 can write a non-public IPv4 address, or be non-public itself
 * (issue 36 item 7): when the endpoint is registered, and when the name it names is resolved at delivery time.
 */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../deps.ts';
import { isAppError } from '../../lib/errors.ts';
import { guardedLookup, refusedAddress } from './sender.ts';
import { checkEndpointUrl } from './webhooks.service.ts';

const production = { config: { environment: 'production' } } as unknown as Deps;
const sandbox = { config: { environment: 'sandbox' } } as unknown as Deps;

/** Non-public addresses as IPv6 writes them, each with what it hides. */
const HIDDEN = [
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::7f00:1', 'IPv4-compatible loopback, hex'],
  ['::ffff:0:7f00:1', 'IPv4-translated (SIIT) loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata address'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata address, hex'],
  ['::169.254.169.254', 'IPv4-compatible metadata address'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['2002:a9fe:a9fe::1', '6to4 of the metadata address'],
  ['2002:a00:1::1', '6to4 of 10.0.0.1'],
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
  ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['fec0::1', 'site-local'],
  ['100::1', 'discard-only'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['5f00::1', 'SRv6 SIDs'],
] as const;

/** Public addresses, among them a public IPv4 address in each embedding form. */
const PUBLIC_IPV6 = '2606:2800:220:1:248:1893:25c8:1946';
const PUBLIC = [
  '93.184.216.34',
  '2606:2800:220:1:248:1893:25c8:1946',
  '2002:5db8:d822::1',
  '64:ff9b::5db8:d822',
];

function refusal(deps: Deps, url: string): string | null {
  try {
    checkEndpointUrl(deps, url);
    return null;
  } catch (error) {
    return isAppError(error) ? error.code : String(error);
  }
}

describe('registering a webhook endpoint', () => {
  it.each(HIDDEN)(
    'refuses [%s] (%s) with invalid_webhook_url, in production and in the sandbox',
    (address) => {
      expect(refusal(production, `https://[${address}]/hook`)).toBe('invalid_webhook_url');
      // The sandbox's loopback is this machine's: an IPv4-mapped 127.x is the one form a socket reaches it by.
      if (address !== '::ffff:7f00:1') {
        expect(refusal(sandbox, `http://[${address}]:8080/hook`)).toBe('invalid_webhook_url');
      }
    },
  );

  it('still accepts public addresses, whatever form they are written in', () => {
    for (const address of PUBLIC) {
      const host = address.includes(':') ? `[${address}]` : address;
      expect(refusal(production, `https://${host}/hook`), address).toBeNull();
    }
    // The sandbox lets a developer receive on this machine: loopback as IPv4 and as IPv6 writes it.
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]']) {
      expect(refusal(sandbox, `http://${host}:8080/hook`), host).toBeNull();
    }
  });
});

describe('delivering to a name', () => {
  /** What the guarded lookup answers when the name resolves to `addresses`. */
  function lookUp(addresses: LookupAddress[]): Promise<string> {
    const resolve = ((_hostname: string, _options: object, callback: (...args: unknown[]) => void) =>
      callback(null, addresses)) as never;
    return new Promise((done) => {
      guardedLookup(false, () => {}, resolve)('hooks.example.com', { all: true }, (error, answer) =>
        done(error ? error.message : JSON.stringify(answer)),
      );
    });
  }

  it.each(HIDDEN)('refuses a name that resolves to %s (%s)', async (address) => {
    expect(await lookUp([{ address, family: 6 }])).toMatch(/^refused: /);
    // One hidden address among public ones is enough to refuse the name.
    expect(
      await lookUp([
        { address: PUBLIC_IPV6, family: 6 },
        { address, family: 6 },
      ]),
    ).toMatch(/^refused: /);
  });

  it('connects to a name that resolves to public addresses only', async () => {
    const addresses = PUBLIC.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    expect(JSON.parse(await lookUp(addresses))).toEqual(addresses);
  });

  it('names the address and what it hides in the refusal', () => {
    expect(refusedAddress('::ffff:0:7f00:1', false)).toMatch(/127\.0\.0\.1/);
  });
});
