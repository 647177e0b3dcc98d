import { isServiceTrouble } from './api.ts';
import { plainError } from './errors.ts';
/**
 * A tiny DOM builder: `h('button', {type: 'button', onclick: fn}, 'Save')`. No framework, no inline HTML strings
 * (everything is text nodes, so nothing the service returns is ever parsed as markup).
 */

export type Child = Node | string | number | null | undefined | false | Child[];
type Handler = (event: Event) => void;
export type Attrs = Record<string, string | number | boolean | Handler | null | undefined>;

const PROPERTIES = new Set([
  'value',
  'checked',
  'disabled',
  'selected',
  'indeterminate',
  'hidden',
  'required',
]);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value as Handler);
    } else if (PROPERTIES.has(name)) {
      // Attribute too, so that a form reset returns to this value.
      if (name === 'value' || name === 'checked' || name === 'selected') {
        element.setAttribute(name, value === true ? '' : String(value));
      }
      (element as unknown as Record<string, unknown>)[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** This module's state: the last id `uid` gave. */
const state = { nextId: 0 };
/** A unique id for label/control pairs. */
export function uid(prefix: string): string {
  state.nextId += 1;
  return `${prefix}-${state.nextId}`;
}

/** A labelled form field; `hint` is linked with aria-describedby. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): HTMLDivElement {
  if (!control.id) control.id = uid('f');
  const hintId = hint ? `${control.id}-hint` : undefined;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
  );
}

/** A card with its own heading (`h2`), labelled by it. */
export function section(title: string, ...children: (HTMLElement | null)[]): HTMLElement {
  const id = uid('h');
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}

/**
 * A list's pager: Newer and Older buttons around "Page n of m" (`total` items, `pageSize` a page), and `extra`
 * after them; `go` gets the page to show.
 */
export function pager(
  at: { page: number; pageSize: number; total: number },
  go: (page: number) => void,
  ...extra: Child[]
): HTMLDivElement {
  const pages = Math.max(1, Math.ceil(at.total / at.pageSize));
  const prev = h('button', { type: 'button', class: 'secondary small', disabled: at.page <= 1 }, 'Newer');
  const next = h('button', { type: 'button', class: 'secondary small', disabled: at.page >= pages }, 'Older');
  prev.addEventListener('click', () => go(at.page - 1));
  next.addEventListener('click', () => go(at.page + 1));
  return h('div', { class: 'pager' }, prev, h('span', null, `Page ${at.page} of ${pages}`), next, ...extra);
}

/** A message area that screen readers announce. */
export function statusArea(): HTMLDivElement {
  return h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
}

export function showError(area: Element, message: string): void {
  replace(area, h('p', { class: 'error', role: 'alert' }, message));
}

/** Marks the failures that the next answer of the service makes stale (`clearStaleFailures`). */
const STALE_MARK = 'data-shown-at';

/**
 * A failure in plain words. One caused by the service's own trouble (no answer, a 5xx) is stale once the service
 * answers a request sent after it was shown: `clearStaleFailures` then removes it.
 */
export function showFailure(area: Element, error: unknown): void {
  showError(area, plainError(error));
  if (isServiceTrouble(error)) area.firstElementChild?.setAttribute(STALE_MARK, String(performance.now()));
}

/** Removes the service-trouble failures shown before a request that started at `startedAt` was answered. */
export function clearStaleFailures(startedAt: number): void {
  for (const element of document.querySelectorAll<HTMLElement>(`[${STALE_MARK}]`)) {
    if (Number(element.getAttribute(STALE_MARK)) < startedAt) element.remove();
  }
}

/**
 * Re-enables a submit button after its work; when disabling it took keyboard focus away (to the page), focus goes
 * back to the button, so a person using the keyboard stays where they were after a failure.
 */
export function enableAgain(submit: HTMLButtonElement): void {
  submit.disabled = false;
  const active = document.activeElement;
  if (!active || active === document.body) submit.focus();
}

/**
 * A form's submit: the previous message cleared, the button disabled while `work` runs, and a failure shown in
 * `status` in plain words (focus kept on the button, see `enableAgain`).
 */
export function onSubmit(
  form: HTMLFormElement,
  submit: HTMLButtonElement,
  status: Element,
  work: () => Promise<void>,
): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    replace(status);
    submit.disabled = true;
    try {
      await work();
    } catch (error) {
      showFailure(status, error);
    } finally {
      enableAgain(submit);
    }
  });
}

export function showInfo(area: Element, ...children: Child[]): void {
  replace(area, h('p', { class: 'info' }, ...children));
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

export function shortHex(value: string | null | undefined, keep = 6): string {
  if (!value) return '—';
  return value.length > keep * 2 + 3 ? `${value.slice(0, keep + 2)}…${value.slice(-keep)}` : value;
}

/**
 * A chain transaction's hash, short: a link to the network's explorer when it has one, else the hash itself (whole
 * in its title); `pending` when there is no hash yet.
 */
export function txLink(hash: string | null, explorerUrl: string | null, pending: string): Child {
  if (!hash) return pending;
  return explorerUrl
    ? h('a', { href: explorerUrl, target: '_blank', rel: 'noopener noreferrer' }, shortHex(hash))
    : h('code', { title: hash }, shortHex(hash));
}

/**
 * A button whose visible `label` starts its accessible name; `about` (" of Sender") completes the name for screen
 * readers only, so the name always contains the visible text (WCAG 2.5.3, label in name).
 */
export function labelledButton(label: string, about?: string, attrs: Attrs = {}): HTMLButtonElement {
  return h(
    'button',
    { type: 'button', ...attrs },
    label,
    about ? h('span', { class: 'visually-hidden' }, ` ${about}`) : null,
  );
}

/** A button that copies `text` to the clipboard and says so; `about` as in `labelledButton`. */
export function copyButton(text: string, label = 'Copy', about?: string): HTMLButtonElement {
  const button = labelledButton(label, about, { class: 'secondary small' });
  const initial = [...button.childNodes];
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed: select the text';
    }
    window.setTimeout(() => button.replaceChildren(...initial), 2000);
  });
  return button;
}

/**
 * A long value (an address, a hash) cut in the middle when space runs out: the start ends in an ellipsis, the last
 * `tail` characters always show. Screen readers and copy-by-selection get the whole value.
 */
export function middleTruncated(value: string, tail = 6): HTMLElement {
  return h(
    'code',
    { class: 'middle-truncated', title: value },
    h('span', { class: 'mt-head' }, value.slice(0, -tail)),
    h('span', { class: 'mt-tail' }, value.slice(-tail)),
  );
}

/** Saves `data` as a file named `filename` (a download started from script). */
export function saveFile(filename: string, data: Blob): void {
  const url = URL.createObjectURL(data);
  const link = h('a', { href: url, download: filename, class: 'visually-hidden' }, filename);
  document.body.appendChild(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Sets a button busy while `work` runs (disabled, aria-busy, label swapped). */
export async function busy<T>(button: HTMLButtonElement, label: string, work: () => Promise<T>): Promise<T> {
  const original = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = label;
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = original;
  }
}

/** Status values as short plain words. */
export function statusBadge(status: string): HTMLSpanElement {
  return h('span', { class: `badge badge-${status.toLowerCase()}` }, status);
}

/**
 * The "Skip to content" link moves focus to <main> without touching the URL fragment (both pages use the
 * fragment: the dashboard for its views, the claim page for the claim code).
 */
export function installSkipLink(): void {
  const link = document.querySelector<HTMLAnchorElement>('a.skip-link');
  link?.addEventListener('click', (event) => {
    event.preventDefault();
    const main = document.getElementById('main');
    main?.focus();
    main?.scrollIntoView();
  });
}
