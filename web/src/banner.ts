import { SANDBOX_OUTCOMES } from '../../clients/typescript/src/index.ts';
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

/** What each magic amount does in the sandbox (its last three of six decimals), as the README's table says. */
const MAGIC_AMOUNTS: [string, string, string][] = [
  [
    SANDBOX_OUTCOMES.fail,
    'fund, mint, transfer, redeem',
    'FAILED with the operation’s own error code; nothing moves',
  ],
  [
    SANDBOX_OUTCOMES.transient,
    'fund, mint, transfer, redeem',
    'stays QUEUED about 30 s (transient faults), then completes',
  ],
  [
    SANDBOX_OUTCOMES.claimFailed,
    'a letter’s claim',
    'the first claim fails (claim_failed); the next one succeeds',
  ],
  [
    SANDBOX_OUTCOMES.vaultUnderfunded,
    'a letter’s claim',
    'the first claim is refused (escrow_vault_underfunded); the next one succeeds',
  ],
  [
    SANDBOX_OUTCOMES.claimUnsettled,
    'a letter’s claim',
    'the claim is sent but unsettled (claim_unsettled); it completes for you shortly',
  ],
  [
    SANDBOX_OUTCOMES.escrowUnsettled,
    'sending a letter',
    'the escrow is sent but unsettled (escrow_unsettled); the letter is escrowed shortly',
  ],
];

/** The sandbox's test amounts, folded away under the banner: integrators use them to try their error paths. */
function magicAmountsNotice(): HTMLElement {
  return h(
    'details',
    { class: 'banner-more magic-amounts' },
    h('summary', null, 'Test amounts'),
    h(
      'p',
      null,
      'In the sandbox an amount ending in these three of its six decimals (e.g. 10.000402) makes the outcome ' +
        'happen; the whole amount is moved. The operator can also move the test clock (POST /api/v1/sandbox/clock).',
    ),
    h(
      'table',
      null,
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'Ends in'), h('th', null, 'On'), h('th', null, 'Outcome')),
      ),
      h(
        'tbody',
        null,
        ...MAGIC_AMOUNTS.map(([digits, on, outcome]) =>
          h('tr', null, h('td', null, `…${digits}`), h('td', null, on), h('td', null, outcome)),
        ),
      ),
    ),
  );
}

/** Fills `slot` with the sandbox banner when the network's confidentiality is only a mock. */
export async function networkBanner(slot: HTMLElement): Promise<NetworkInfo | null> {
  try {
    const network = await get<NetworkInfo>('/network');
    if (network.confidentiality === 'mock') {
      replace(
        slot,
        h(
          'div',
          { class: 'banner', role: 'note' },
          h('strong', null, 'Local sandbox: amounts are not truly encrypted.'),
          // The explanation gives way on a phone, where the header and banner must stay short.
          h(
            'span',
            { class: 'banner-more' },
            ' This network runs a mock of the confidential rail; use test amounts only.',
          ),
          magicAmountsNotice(),
        ),
      );
    } else if (network.environment === 'sandbox') {
      replace(
        slot,
        h(
          'div',
          { class: 'banner sandbox', role: 'note' },
          `Sandbox on ${network.network}: test funds only.`,
          magicAmountsNotice(),
        ),
      );
    }
    return network;
  } catch {
    return null;
  }
}
