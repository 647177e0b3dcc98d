import { get } from './api.ts';
import { h, replace } from './dom.ts';
import type { NetworkInfo } from './types.ts';

/**
 * Where the service's notices go (the sandbox banner, a temporary password): a complementary landmark, so that
 * nothing on the page sits outside one; hidden while empty.
 */
export function bannerSlot(): HTMLElement {
  return h('aside', { class: 'banner-slot', 'aria-label': 'Service notices' });
}

/** Fills `slot` with the sandbox banner when the network's confidentiality is only a mock. */
export async function networkBanner(slot: HTMLElement): Promise<NetworkInfo | null> {
  try {
    const network = await get<NetworkInfo>('/network');
    if (network.confidentiality === 'mock') {
      replace(
        slot,
        h(
          'p',
          { class: 'banner', role: 'note' },
          h('strong', null, 'Local sandbox: amounts are not truly encrypted.'),
          // The explanation gives way on a phone, where the header and banner must stay short.
          h(
            'span',
            { class: 'banner-more' },
            ' This network runs a mock of the confidential rail; use test amounts only.',
          ),
        ),
      );
    } else if (network.environment === 'sandbox') {
      replace(
        slot,
        h('p', { class: 'banner sandbox', role: 'note' }, `Sandbox on ${network.network}: test funds only.`),
      );
    }
    return network;
  } catch {
    return null;
  }
}
