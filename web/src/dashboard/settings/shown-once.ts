/** The panel that shows a new secret (an API key, a webhook signing secret) the one time the service sends it. */

import { copyButton, h, replace, uid } from '../../dom.ts';

/** Fills `into` with the secret, focused; "I have saved it" empties it again and focuses `then`. */
export function showSecretOnce(
  into: HTMLElement,
  secret: { title: string; value: string; copyLabel: string; note: string },
  then: HTMLElement,
): void {
  const headingId = uid('h');
  const panel = h(
    'div',
    { class: 'created', role: 'region', 'aria-labelledby': headingId, tabindex: -1 },
    h('h3', { id: headingId }, secret.title),
    h('p', null, h('strong', null, 'Copy it now: it is shown only once and cannot be recovered.')),
    h(
      'p',
      null,
      h('code', { class: 'secret-key' }, secret.value),
      ' ',
      copyButton(secret.value, secret.copyLabel),
    ),
    h('p', { class: 'muted' }, secret.note),
  );
  const dismiss = h('button', { type: 'button', class: 'secondary small' }, 'I have saved it');
  dismiss.addEventListener('click', () => {
    replace(into);
    then.focus();
  });
  panel.append(dismiss);
  replace(into, panel);
  panel.focus();
}
