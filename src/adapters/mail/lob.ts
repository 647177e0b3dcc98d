/**
 * Lob (https://docs.lob.com), through its REST API with `fetch`, not `@lob/lob-typescript-sdk`: the SDK sends
 * letters as JSON with `file` as a string (inline HTML, a template id or a URL Lob downloads), so a local PDF
 * can only go through the documented multipart upload, and the alternative (putting the PDF at a URL for Lob
 * to fetch) would publish the claim code. Requests:
 *
 *   POST   /v1/letters        multipart/form-data: to[…], from[…], file (application/pdf), color, double_sided,
 *                             address_placement=top_first_page, mail_type, use_type, extra_service, description,
 *                             metadata[…]; header `Idempotency-Key`
 *   GET    /v1/letters?metadata[sealpay_mail_key]=…   adoption of a letter accepted more than a day ago
 *   GET    /v1/letters/{id}   status and tracking
 *   DELETE /v1/letters/{id}   cancellation (possible until Lob's cancellation window closes)
 *
 * Authentication is HTTP Basic with the API key as the user name. A `test_` key makes Lob validate and price
 * the letter without printing it (`testMode`). The claim code and claim URL are never sent outside the file:
 * no merge variables, no QR-code feature, and a description that looks like one is replaced.
 *
 * Idempotency: Lob honours `Idempotency-Key` for 24 hours (a repeat returns the letter already created). To
 * stay idempotent past that, every letter carries `metadata[sealpay_mail_key]` (a hash of the key) and `send`
 * first looks for a live letter with it; a retry within the day is covered by the header even where that
 * listing lags behind.
 */
import { AppError } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import {
  type DeliveryMethod,
  type MailRequest,
  type MailResult,
  type PrintProvider,
  type SenderAddress,
  safeDescription,
} from './types.ts';

/** Lob's API root (tests point `baseUrl` elsewhere). */
export const LOB_BASE_URL = 'https://api.lob.com/v1';
const METADATA_KEY = 'sealpay_mail_key';

/** The Lob account to print and mail through, and the return address its letters carry. */
export interface LobPrintProviderOptions {
  apiKey: string;
  /** The return address, or the id (`adr_…`) of an address saved in the Lob account. */
  sender?: SenderAddress | string | null;
  /** Default `https://api.lob.com/v1`; tests point it at a local server. */
  baseUrl?: string;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
}

/** The part of Lob's letter object this adapter reads. */
interface LobLetter {
  id: string;
  date_created?: string;
  send_date?: string;
  expected_delivery_date?: string | null;
  tracking_number?: string | null;
  tracking_events?: { name?: string; type?: string; time?: string | null; date_created?: string }[];
  extra_service?: string | null;
  status?: string;
  deleted?: boolean;
  metadata?: Record<string, string>;
}

interface LobErrorBody {
  error?: { message?: string; status_code?: number; code?: string };
}

class LobHttpError extends Error {
  readonly status: number;
  readonly code: string | null;
  constructor(status: number, message: string, code: string | null) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * A `PrintProvider` over Lob's REST API: `send` uploads the PDF and mails it (idempotent per key, also past Lob's
 * own 24 hours), `refresh` reads status and tracking, `cancel` stops it within Lob's window. A `test_` key prints
 * nothing (`testMode`). Errors are `AppError`s: `postage_unavailable`, `upstream_error`,
 * `mail_provider_not_configured`.
 */
export function createLobPrintProvider(options: LobPrintProviderOptions): PrintProvider {
  const baseUrl = (options.baseUrl ?? LOB_BASE_URL).replace(/\/+$/, '');
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:`).toString('base64')}`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const now = options.now ?? (() => new Date());
  const testMode = options.apiKey.startsWith('test_');

  async function call<T>(
    method: string,
    path: string,
    init: { body?: FormData; headers?: Record<string, string> } = {},
  ) {
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${path}`, {
        method,
        headers: { Authorization: authorization, Accept: 'application/json', ...init.headers },
        ...(init.body ? { body: init.body } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new AppError(
        'upstream_error',
        'The print provider could not be reached; the same request may be retried.',
        {
          details: { provider: 'lob' },
          retryable: true,
          cause: error,
        },
      );
    }
    const text = await response.text().catch(() => '');
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!response.ok) {
      const error = (body as LobErrorBody | null)?.error;
      throw new LobHttpError(
        response.status,
        error?.message ?? `HTTP ${response.status}`,
        error?.code ?? null,
      );
    }
    return body as T;
  }

  /** Maps a failed call to the service's errors; `letter` says whether it was the letter itself Lob refused. */
  function translate(error: unknown, letter: boolean): never {
    if (!(error instanceof LobHttpError)) throw error;
    const details = { provider: 'lob', providerStatus: error.status, providerCode: error.code };
    if (error.status === 401 || error.status === 403) {
      throw new AppError(
        'mail_provider_not_configured',
        `The print provider refused the service's API key: ${error.message}`,
        {
          details,
        },
      );
    }
    if (error.status === 429 || error.status >= 500) {
      throw new AppError('upstream_error', `The print provider failed: ${error.message}`, {
        details,
        retryable: true,
      });
    }
    if (letter) throw new AppError('postage_unavailable', error.message, { details });
    throw new AppError('upstream_error', `The print provider refused the request: ${error.message}`, {
      details,
      retryable: false,
    });
  }

  function resultOf(letter: LobLetter | null, requested: DeliveryMethod): MailResult {
    if (!letter || typeof letter.id !== 'string') {
      throw new AppError('upstream_error', 'The print provider answered without a letter.', {
        details: { provider: 'lob' },
        retryable: true,
      });
    }
    const created = letter.date_created ? new Date(letter.date_created) : null;
    return {
      provider: 'printer',
      providerId: letter.id,
      deliveryMethod:
        letter.extra_service === 'certified' || letter.extra_service === 'registered' ? 'tracked' : requested,
      status: statusOf(letter),
      trackingNumber: letter.tracking_number ?? null,
      expectedDeliveryDate: dateOnly(letter.expected_delivery_date),
      mailedAt: created && !Number.isNaN(created.getTime()) ? created : now(),
      testMode,
    };
  }

  return {
    name: 'lob',
    testMode,

    async send(request: MailRequest): Promise<MailResult> {
      const sender = options.sender;
      if (!sender) {
        throw new AppError(
          'mail_provider_not_configured',
          'The print provider has no return address configured.',
          {
            details: { provider: 'lob' },
          },
        );
      }
      const keyHash = sha256Hex(`sealpay-mail:${request.idempotencyKey}`).slice(0, 40);

      // Adopt a letter accepted under this key before (also after Lob's 24-hour idempotency window).
      const query = new URLSearchParams({ limit: '2', [`metadata[${METADATA_KEY}]`]: keyHash });
      try {
        const listed = await call<{ data?: LobLetter[] }>('GET', `/letters?${query}`);
        const live = listed?.data?.find(
          (letter) => !letter.deleted && letter.metadata?.[METADATA_KEY] === keyHash,
        );
        if (live) return resultOf(live, request.deliveryMethod);
      } catch (error) {
        translate(error, false);
      }

      const form = new FormData();
      appendAddress(form, 'to', {
        name: request.to.name,
        address_line1: request.to.address.line1,
        address_line2: [request.to.address.line2, request.to.address.landmark].filter(Boolean).join(', '),
        address_city: request.to.address.city,
        address_state: request.to.address.region,
        address_zip: request.to.address.postal ?? '',
        address_country: request.to.address.country,
      });
      if (typeof sender === 'string') {
        form.append('from', sender);
      } else {
        appendAddress(form, 'from', {
          name: sender.name,
          company: sender.company ?? '',
          address_line1: sender.line1,
          address_line2: sender.line2 ?? '',
          address_city: sender.city,
          address_state: sender.region,
          address_zip: sender.postal,
          address_country: sender.country,
        });
      }
      form.append('description', safeDescription(request));
      form.append('color', 'false');
      form.append('double_sided', 'false');
      form.append('address_placement', 'top_first_page');
      form.append('mail_type', 'usps_first_class');
      form.append('use_type', 'operational');
      if (request.deliveryMethod === 'tracked') {
        form.append('extra_service', request.isDomestic ? 'certified' : 'registered');
      }
      form.append('metadata[sealpay_letter_id]', request.letterId);
      form.append(`metadata[${METADATA_KEY}]`, keyHash);
      form.append(
        'file',
        new Blob([new Uint8Array(request.pdf)], { type: 'application/pdf' }),
        `${request.letterId}.pdf`,
      );

      try {
        const letter = await call<LobLetter>('POST', '/letters', {
          body: form,
          headers: { 'Idempotency-Key': request.idempotencyKey },
        });
        return resultOf(letter, request.deliveryMethod);
      } catch (error) {
        translate(error, true);
      }
    },

    async cancel(providerId: string) {
      try {
        const deleted = await call<{ id?: string; deleted?: boolean }>(
          'DELETE',
          `/letters/${encodeURIComponent(providerId)}`,
        );
        return deleted?.deleted === true ? { cancelled: true } : { cancelled: false, reason: 'not deleted' };
      } catch (error) {
        return { cancelled: false, reason: error instanceof Error ? error.message : String(error) };
      }
    },

    async refresh(providerId: string): Promise<Partial<MailResult>> {
      try {
        const letter = await call<LobLetter>('GET', `/letters/${encodeURIComponent(providerId)}`);
        const { status, trackingNumber, expectedDeliveryDate } = resultOf(letter, 'standard');
        return { status, trackingNumber, expectedDeliveryDate };
      } catch (error) {
        translate(error, false);
      }
    },
  };
}

/** Nested fields in Lob's form encoding (`to[address_line1]`); empty values are left out. */
function appendAddress(form: FormData, prefix: string, fields: Record<string, string>): void {
  for (const [field, value] of Object.entries(fields)) {
    if (value.trim().length > 0) form.append(`${prefix}[${field}]`, value);
  }
}

/**
 * Lob's letter as one word: `cancelled` once deleted, else the latest tracking event in snake case
 * (`in_transit`, `in_local_area`, `processed_for_delivery`, `re_routed`, `returned_to_sender`, `delivered`, …),
 * else Lob's own `status` when it sends one, else `created` (accepted, not yet in the mail stream).
 */
export function statusOf(letter: LobLetter): string {
  if (letter.deleted) return 'cancelled';
  const events = [...(letter.tracking_events ?? [])].sort((a, b) =>
    (a.time ?? a.date_created ?? '').localeCompare(b.time ?? b.date_created ?? ''),
  );
  const latest = events.at(-1)?.name;
  if (latest) return snake(latest);
  if (typeof letter.status === 'string' && letter.status.length > 0) return snake(letter.status);
  return 'created';
}

function snake(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}

function dateOnly(value: string | null | undefined): string | null {
  if (!value) return null;
  const match = /^\d{4}-\d{2}-\d{2}/.exec(value);
  return match ? match[0] : null;
}
