/**
 * What the new-letter form and a letter's card share: the list they act on, the claim code block and the PDF
 * button.
 */

import { apiBlob } from '../../api.ts';
import { type Child, copyButton, h, labelledButton, saveFile, showError } from '../../dom.ts';
import { plainError } from '../../errors.ts';
import { qrCanvas } from '../../qr.ts';
import type { Letter } from '../../types.ts';

/** The sender's letters as the form and the cards act on them. */
export interface LettersList {
  /** Where messages about the list and its letters go. */
  readonly status: HTMLElement;
  /** Reads the current page again. */
  refresh(): Promise<void>;
  /** Back to the newest page, read again (a letter was created). */
  showNewest(): Promise<void>;
  /** A letter changed by an action: the list is read again and keyboard focus stays on its card. */
  changed(letterId: string): Promise<void>;
  /** Every card built again from the letters at hand (something all cards show changed). */
  rebuild(): Promise<void>;
  /** The amount the sender escrowed, from their own escrow transaction; null until read. */
  escrowAmount(letter: Letter): string | null;
  /** A disclosure of a letter's card that stays open (or closed) as the person left it across refreshes. */
  details(letterId: string, key: string, summary: HTMLElement, ...content: Child[]): HTMLDetailsElement;
}

/** The claim code, its link and its QR (while the letter still has a code). */
export function codeBlock(letter: Letter): HTMLElement {
  if (!letter.claimCode || !letter.claimUrl)
    return h('p', { class: 'muted' }, 'No claim code (the letter is claimed).');
  return h(
    'div',
    { class: 'code-block' },
    qrCanvas(letter.claimUrl, `QR code of the claim link for ${letter.recipient.name}`),
    h(
      'dl',
      null,
      h('dt', null, 'Claim code'),
      h(
        'dd',
        null,
        h('code', { class: 'claim-code' }, letter.claimCode),
        ' ',
        copyButton(letter.claimCode, 'Copy code'),
      ),
      h('dt', null, 'Claim link'),
      h(
        'dd',
        null,
        h('a', { href: letter.claimUrl, class: 'claim-url', rel: 'noreferrer' }, letter.claimUrl),
        ' ',
        copyButton(letter.claimUrl, 'Copy link'),
      ),
    ),
  );
}

/** Downloads the printable letter; a failure is shown in `status`. */
export function pdfButton(letter: Letter, status: HTMLElement): HTMLButtonElement {
  const button = labelledButton('Download PDF', `of the letter for ${letter.recipient.name}`, {
    class: 'secondary',
  });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const blob = await apiBlob(`/transfer/letter/${letter.id}/pdf`, 'application/pdf');
      saveFile(`letter-${letter.id}.pdf`, blob);
    } catch (error) {
      showError(status, plainError(error));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}
