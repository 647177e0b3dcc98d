import { get } from './api.ts';
import { h, replace } from './dom.ts';
import type { NetworkInfo } from './types.ts';

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
          ' This network runs a mock of the confidential rail; use test amounts only.',
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
