/**
 * Whether "Mail it" can work for a letter, and why not in plain words. The service mails only letters whose claim
 * link is public https (the printed QR must open anywhere), and only with a print provider: the local print sandbox
 * on the sandbox networks, Lob where `LOB_API_KEY` is set (a 503 `mail_provider_not_configured` says it is not).
 */

import type { Letter } from '../../types.ts';

/** Set once the service answered that it has no print provider: no letter is offered mailing after that. */
const state = { providerMissing: false };

export function noteProviderMissing(): void {
  state.providerMissing = true;
}

/** Why this letter cannot be mailed, or null when "Mail it" can work. Only escrowed letters are ever mailed. */
export function mailingBlocker(letter: Letter): string | null {
  if (letter.status !== 'ESCROWED') return null;
  const instead = 'Download the PDF and post it yourself, or hand over the code or QR.';
  if (state.providerMissing)
    return `This service has no printing and posting partner set up, so it cannot mail letters. ${instead}`;
  if (letter.claimUrl && !letter.claimUrl.startsWith('https://')) {
    const origin = new URL(letter.claimUrl).origin;
    return (
      `This letter cannot be mailed: its claim link (${origin}) only opens on this computer or network, ` +
      `and a posted letter needs a link that opens anywhere. ${instead}`
    );
  }
  return null;
}
