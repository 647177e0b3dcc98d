/**
 * The service's API for this app, through `@sealpay/client` (`clients/typescript`): the same request path,
 * envelope unwrapping, `SealpayError` and retries as integrators get, with the browser's session cookie.
 */
import {
  type ClientErrorCode,
  createClient,
  type Method,
  newIdempotencyKey,
  SealpayError,
} from '../../clients/typescript/src/index.ts';

export { type ClientErrorCode, SealpayError as ApiError };

export const API_BASE = '/api/v1';

/** The app's client: the session cookie of this origin; a `429` is waited out for at most 10 s. */
export const client = createClient({
  baseUrl: API_BASE,
  credentials: 'same-origin',
  retry: { maxDelayMs: 10_000 },
});

type SessionLostListener = (error: SealpayError) => void;
/** This module's state: who is told when the session ends. */
const state = { sessionLost: null as SessionLostListener | null };

/** Called when an authenticated call answers 401 unauthenticated / session_expired. */
export function onSessionLost(listener: SessionLostListener | null): void {
  state.sessionLost = listener;
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** Do not call the session-lost listener on 401 (login forms, session probes). */
  quiet401?: boolean;
  /** Give up after this long: a SealpayError `timeout` (default `DEFAULT_TIMEOUT_MS`). */
  timeoutMs?: number;
}

/** No call waits forever: past this it fails with `timeout`, and whatever waited on it (a button) is freed. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** The service itself was in trouble (no answer, a timeout, a 5xx): the same request may well succeed later. */
export function isServiceTrouble(error: unknown): boolean {
  return error instanceof SealpayError && (error.status === 0 || error.status >= 500);
}

/** `startedAt`: when the answered call was sent (`performance.now()`). */
type AnsweredListener = (startedAt: number) => void;
const answered = new Set<AnsweredListener>();

/** Called after every call the service answered (any status below 500): its trouble before that call is over. */
export function onServiceAnswered(listener: AnsweredListener): void {
  answered.add(listener);
}

function reportAnswered(startedAt: number): void {
  for (const listener of answered) listener(startedAt);
}

function reportSessionLost(error: unknown, options: CallOptions): void {
  if (
    error instanceof SealpayError &&
    error.status === 401 &&
    !options.quiet401 &&
    (error.code === 'unauthenticated' || error.code === 'session_expired')
  ) {
    state.sessionLost?.(error);
  }
}

/**
 * One API call by its concrete path (`/transactions/abc?page=2`); resolves to the envelope's `data`, rejects with
 * a SealpayError.
 */
export async function api<T>(
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<T> {
  const startedAt = performance.now();
  try {
    const data = await client.request(method.toLowerCase() as Method, path as never, {
      ...(body === undefined ? {} : { body: body as never }),
      ...(options.headers ? { headers: options.headers } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    reportAnswered(startedAt);
    return data as T;
  } catch (error) {
    if (error instanceof SealpayError && !isServiceTrouble(error)) reportAnswered(startedAt);
    reportSessionLost(error, options);
    throw error;
  }
}

/** A binary download (PDF): resolves to the blob, rejects with a SealpayError when the envelope says so. */
export async function apiBlob(path: string, expectedType: string): Promise<Blob> {
  const blob = await client.download(path, { signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS) });
  if (!blob.type.startsWith(expectedType)) {
    throw new SealpayError({
      status: 200,
      code: 'unexpected_response',
      message: `Expected ${expectedType}, got ${blob.type || 'nothing'}.`,
    });
  }
  return blob;
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
  return { 'Idempotency-Key': newIdempotencyKey() };
}

export { newIdempotencyKey };
