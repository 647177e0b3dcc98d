import { h } from './dom.ts';

/**
 * An indeterminate progress bar with an elapsed-seconds counter, for calls that block up to ~20 s
 * (letter creation, claim). `stop()` removes it.
 */
export function longWait(message: string, expectedSeconds = 20): { element: HTMLElement; stop(): void } {
  const started = Date.now();
  const counter = h('span', { class: 'muted' }, '0 s');
  const element = h(
    'div',
    { class: 'long-wait' },
    h('p', { role: 'status' }, message),
    h('progress', { 'aria-label': message }),
    h(
      'p',
      { class: 'muted', 'aria-hidden': 'true' },
      counter,
      ` elapsed; usually done within ${expectedSeconds} seconds.`,
    ),
  );
  const timer = window.setInterval(() => {
    counter.textContent = `${Math.round((Date.now() - started) / 1000)} s`;
  }, 1000);
  return {
    element,
    stop() {
      window.clearInterval(timer);
      element.remove();
    },
  };
}
