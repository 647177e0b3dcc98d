/** The service's API: `/api/v1`, envelope `{ok, data}` / `{ok: false, error: {code, message, details}}`. */

export const API_BASE = '/api/v1';

/** The codes this app gives an error of its own: the service could not be reached, or answered unreadably. */
export type ClientErrorCode = 'network_error' | 'unexpected_response';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  /** Seconds from a 429's Retry-After header, when present. */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: unknown,
    retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }
}

type SessionLostListener = (error: ApiError) => void;
let sessionLost: SessionLostListener | null = null;

/** Called when an authenticated call answers 401 unauthenticated / session_expired. */
export function onSessionLost(listener: SessionLostListener | null): void {
  sessionLost = listener;
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** Do not call the session-lost listener on 401 (login forms, session probes). */
  quiet401?: boolean;
}

async function send(method: string, path: string, body: unknown, options: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const init: RequestInit = { method, headers, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(`${API_BASE}${path}`, init);
  } catch {
    throw new ApiError(
      0,
      'network_error',
      'The service could not be reached. Check your connection and try again.',
    );
  }
}

async function failure(response: Response, options: CallOptions): Promise<ApiError> {
  type Failure = { error?: { code?: string; message?: string; details?: unknown } } | null;
  let parsed: Failure = null;
  try {
    parsed = (await response.json()) as Failure;
  } catch {
    parsed = null;
  }
  const retryAfterHeader = response.headers.get('retry-after');
  const retryAfter = retryAfterHeader && /^[0-9]+$/.test(retryAfterHeader) ? Number(retryAfterHeader) : null;
  const error = new ApiError(
    response.status,
    parsed?.error?.code ?? 'unexpected_response',
    parsed?.error?.message ?? `Unexpected answer from the service (HTTP ${response.status}).`,
    parsed?.error?.details,
    retryAfter,
  );
  if (
    response.status === 401 &&
    !options.quiet401 &&
    (error.code === 'unauthenticated' || error.code === 'session_expired')
  ) {
    sessionLost?.(error);
  }
  return error;
}

/** One API call; resolves to the envelope's `data`, rejects with an ApiError. */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<T> {
  const response = await send(method, path, body, options);
  if (!response.ok) throw await failure(response, options);
  let parsed: { ok?: boolean; data?: unknown };
  try {
    parsed = (await response.json()) as typeof parsed;
  } catch {
    throw new ApiError(
      response.status,
      'unexpected_response',
      'The service sent an answer this page cannot read.',
    );
  }
  if (parsed.ok !== true) throw new ApiError(response.status, 'unexpected_response', 'Unexpected answer.');
  return parsed.data as T;
}

/** A binary download (PDF): resolves to the blob, rejects with an ApiError when the envelope says so. */
export async function apiBlob(path: string, expectedType: string): Promise<Blob> {
  const response = await send('GET', path, undefined, {});
  if (!response.ok) throw await failure(response, {});
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith(expectedType)) {
    throw new ApiError(
      response.status,
      'unexpected_response',
      `Expected ${expectedType}, got ${type || 'nothing'}.`,
    );
  }
  return await response.blob();
}

export const get = <T>(path: string, options?: CallOptions) => api<T>('GET', path, undefined, options);
export const post = <T>(path: string, body?: unknown, options?: CallOptions) =>
  api<T>('POST', path, body, options);
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** A fresh Idempotency-Key for one money-movement submission. */
export function idempotencyKey(): Record<string, string> {
  return { 'Idempotency-Key': crypto.randomUUID() };
}
