/** Webhooks: add an endpoint (its secret is shown once), list them, their deliveries, replay one, send a test. */

import type { WebhookDelivery, WebhookEndpoint } from '../../../../clients/typescript/src/index.ts';
import { del, get, post } from '../../api.ts';
import {
  field,
  formatTime,
  h,
  onSubmit,
  replace,
  section,
  showError,
  showInfo,
  statusArea,
} from '../../dom.ts';
import { plainError } from '../../errors.ts';
import type { Page } from '../../types.ts';
import { showSecretOnce } from './shown-once.ts';

function attemptsText(delivery: WebhookDelivery): string {
  if (delivery.attempts.length === 0) return 'not sent yet';
  return delivery.attempts
    .map((attempt) => `${attempt.statusCode ?? attempt.error ?? 'no answer'} (${attempt.durationMs} ms)`)
    .join(', ');
}

export function webhooks(): HTMLElement {
  const list = h('div');
  const status = statusArea();
  const created = h('div');

  async function showDeliveries(endpoint: WebhookEndpoint, into: HTMLElement): Promise<void> {
    const page = await get<Page<WebhookDelivery>>(`/webhooks/${endpoint.id}/deliveries?pageSize=10`);
    replace(
      into,
      page.items.length === 0
        ? h('p', { class: 'empty' }, 'No deliveries yet.')
        : h(
            'table',
            { class: 'responsive deliveries' },
            h('caption', { class: 'visually-hidden' }, `Deliveries to ${endpoint.url}`),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Event', 'Status', 'Attempts', 'Created', ''].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              null,
              page.items.map((delivery) => {
                const replay = h('button', { type: 'button', class: 'secondary small' }, 'Replay');
                replay.setAttribute('aria-label', `Replay ${delivery.eventType} to ${endpoint.url}`);
                replay.addEventListener('click', async () => {
                  replay.disabled = true;
                  try {
                    await post(`/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`);
                    showInfo(status, `${delivery.eventType} queued again (same webhook-id).`);
                    await showDeliveries(endpoint, into);
                  } catch (error) {
                    showError(status, plainError(error));
                    replay.disabled = false;
                  }
                });
                return h(
                  'tr',
                  { 'data-delivery-status': delivery.status },
                  h('td', { 'data-label': 'Event' }, delivery.eventType),
                  h('td', { 'data-label': 'Status' }, delivery.status),
                  h('td', { 'data-label': 'Attempts' }, attemptsText(delivery)),
                  h('td', { 'data-label': 'Created' }, formatTime(delivery.createdAt)),
                  h('td', { 'data-label': 'Action' }, replay),
                );
              }),
            ),
          ),
    );
  }

  function endpointCard(endpoint: WebhookEndpoint): HTMLElement {
    const deliveries = h('div');
    const test = h('button', { type: 'button', class: 'secondary small' }, 'Send test event');
    const show = h('button', { type: 'button', class: 'secondary small' }, 'Deliveries');
    const remove = h('button', { type: 'button', class: 'danger small' }, 'Delete');
    test.setAttribute('aria-label', `Send a test event to ${endpoint.url}`);
    show.setAttribute('aria-label', `Deliveries to ${endpoint.url}`);
    remove.setAttribute('aria-label', `Delete webhook ${endpoint.url}`);
    test.addEventListener('click', async () => {
      test.disabled = true;
      try {
        await post(`/webhooks/${endpoint.id}/test`);
        showInfo(status, `Test event queued for ${endpoint.url}.`);
        await showDeliveries(endpoint, deliveries);
      } catch (error) {
        showError(status, plainError(error));
      } finally {
        test.disabled = false;
      }
    });
    show.addEventListener('click', () => {
      void showDeliveries(endpoint, deliveries).catch((error) => showError(status, plainError(error)));
    });
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try {
        await del(`/webhooks/${endpoint.id}`);
        showInfo(status, `Webhook ${endpoint.url} deleted.`);
        await load();
      } catch (error) {
        showError(status, plainError(error));
        remove.disabled = false;
      }
    });
    return h(
      'article',
      { class: 'webhook', 'aria-label': endpoint.url, 'data-webhook-id': endpoint.id },
      h('p', null, h('code', null, endpoint.url), ' ', h('span', { class: 'muted' }, endpoint.status)),
      h('p', { class: 'muted small' }, `Events: ${endpoint.events?.join(', ') ?? 'all'}`),
      h('p', null, test, ' ', show, ' ', remove),
      deliveries,
    );
  }

  async function load(): Promise<void> {
    const { endpoints } = await get<{ endpoints: WebhookEndpoint[] }>('/webhooks');
    replace(
      list,
      endpoints.length === 0
        ? h('p', { class: 'empty' }, 'No webhook endpoints.')
        : h('div', null, endpoints.map(endpointCard)),
    );
  }

  const url = h('input', { type: 'url', required: true, maxlength: 2048, autocomplete: 'off' });
  const submit = h('button', { type: 'submit' }, 'Add endpoint');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Add a webhook endpoint' },
    field(
      'Endpoint URL',
      url,
      'https (http too in the sandbox). Every event is sent, signed per Standard Webhooks.',
    ),
    submit,
  );
  onSubmit(form, submit, status, async () => {
    const data = await post<{ endpoint: WebhookEndpoint; secret: string }>('/webhooks', {
      url: url.value.trim(),
    });
    form.reset();
    showSecretOnce(
      created,
      {
        title: `Signing secret of ${data.endpoint.url}`,
        value: data.secret,
        copyLabel: 'Copy secret',
        note: 'Verify each delivery with it using a Standard Webhooks library (webhook-id, -timestamp, -signature).',
      },
      url,
    );
    await load();
  });
  void load().catch((error) => showError(status, plainError(error)));
  return section('Webhooks', created, form, status, list);
}
