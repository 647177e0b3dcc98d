/**
 * The one way tests send requests to the API: typed by the service's own OpenAPI document (the generated `paths` of
 * `@sealpay/client`), over `app.inject` or, for a service in another process, over `fetch`.
 *
 * ```ts
 * const api = apiOf(() => ctx.app); // the context is made in beforeAll: the app is read at each request
 * const body = { walletId, to, amount: '1' };
 * await api.post('/transfer', { body, headers: caller.headers, idempotencyKey: 'k' });
 * await api.get('/transactions/{id}', { params: { id }, headers: caller.headers });
 * await api.get('/transactions', { query: { pageSize: 100 }, headers: caller.headers });
 * const { wallet } = dataOf(await api.post('/wallets', { body: { type: 'CUSTODIAL' }, headers }));
 * await api.raw('POST', '/transfer', { payload: '{"not json', headers: { 'content-type': 'application/json' } });
 * ```
 *
 * A path is one the document lists (the helper adds `/api/v1`), its `{…}` parameters are required and filled in
 * from `params`, a query is the operation's documented one, and a body is checked against the operation's request
 * body: a route change that breaks a test's request then fails `tsc`, not a test run. The answer is the raw response
 * (`statusCode`, `headers`, `body`, `json()`), so a test asserts on it as it would on `app.inject`'s.
 *
 * A request the document does not describe, sent on purpose (a malformed or missing body, a wrong content type, an
 * unknown path, a body on a route that takes none), or one whose path is a value at run time (a table of routes
 * walked in a loop, the authorization matrix), goes through `raw`: the same options, with the method, path and
 * payload left unchecked. Say why beside it.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { paths } from '../clients/typescript/src/openapi.ts';
import type { App } from '../src/http/types.ts';

/** Where the API's paths start; the document's paths are relative to it. */
export const API_PREFIX = '/api/v1';

type Method = 'get' | 'post' | 'patch' | 'delete';

/** The documented paths that answer `method`: `'/transactions/{id}'`, … */
export type PathOf<M extends Method> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

type OperationOf<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type ParametersOf<Op> = Op extends { parameters: infer X } ? X : never;
type PathParamsOf<Op> = ParametersOf<Op> extends { path: infer X } ? X : never;
type QueryOf<Op> = ParametersOf<Op> extends { query?: infer X } ? Exclude<X, undefined> : never;
type BodySpecOf<Op> = Op extends { requestBody?: infer R } ? NonNullable<R> : never;
type BodyOf<Op> = [BodySpecOf<Op>] extends [never]
  ? never
  : BodySpecOf<Op> extends { content: { 'application/json': infer B } }
    ? B
    : never;

/** The request body the document gives `method` on `path`: `RequestBodyOf<'post', '/wallets/import'>`. */
export type RequestBodyOf<M extends Method, P extends PathOf<M>> = BodyOf<OperationOf<P, M>>;

/** What every request may carry, checked or not. */
export interface RequestOptions {
  /** Headers as sent (`caller.headers`: a session cookie or an API key, and any other). */
  headers?: Record<string, string>;
  /** Sent as the `Idempotency-Key` header. */
  idempotencyKey?: string;
  /** The client's address as the service sees it (`app.inject` only): rate limits and lockouts count by it. */
  remoteAddress?: string;
}

/** A body as the operation takes it: required, optional (left out, none is sent) or none at all. */
type BodyOptionOf<Op> = Op extends { requestBody: { content: { 'application/json': unknown } } }
  ? { body: BodyOf<Op> }
  : [BodyOf<Op>] extends [never]
    ? { body?: never }
    : { body?: BodyOf<Op> };

/**
 * A documented operation's options: its path parameters (required when the path has any), its query, and its body
 * (required when the operation requires one).
 */
export type OptionsOf<Op> = RequestOptions &
  BodyOptionOf<Op> &
  ([PathParamsOf<Op>] extends [never] ? { params?: never } : { params: PathParamsOf<Op> }) &
  ([QueryOf<Op>] extends [never] ? { query?: never } : { query?: QueryOf<Op> });

/** The options argument, which may be left out when nothing in it is required. */
export type ArgsOf<Op> =
  Partial<OptionsOf<Op>> extends OptionsOf<Op> ? [options?: OptionsOf<Op>] : [options: OptionsOf<Op>];

/** A request the document does not describe: any path under `/api/v1`, any payload (a string is sent as is). */
export interface RawOptions extends RequestOptions {
  payload?: unknown;
  query?: Record<string, string | number | boolean>;
}

/** An answer as a test reads it: `app.inject`'s response, or the same fields of a `fetch` over real HTTP. */
export interface ApiResponse {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: LightMyRequestResponse['json'];
}

/** An answer over real HTTP, in the shape of `app.inject`'s. */
export interface HttpResponse extends ApiResponse {
  headers: Record<string, string | string[]>;
}

export interface Api<R extends ApiResponse> {
  get<P extends PathOf<'get'>>(path: P, ...args: ArgsOf<OperationOf<P, 'get'>>): Promise<R>;
  post<P extends PathOf<'post'>>(path: P, ...args: ArgsOf<OperationOf<P, 'post'>>): Promise<R>;
  patch<P extends PathOf<'patch'>>(path: P, ...args: ArgsOf<OperationOf<P, 'patch'>>): Promise<R>;
  delete<P extends PathOf<'delete'>>(path: P, ...args: ArgsOf<OperationOf<P, 'delete'>>): Promise<R>;
  /** The escape hatch: a request sent exactly as given, for the ones a test makes wrong on purpose. */
  raw(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options?: RawOptions): Promise<R>;
}

/** One request as the transports take it: method, the whole URL (prefix, path and query), headers and payload. */
interface Outgoing {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  payload?: unknown;
  remoteAddress?: string;
}

interface Checked extends RequestOptions {
  body?: unknown;
  params?: Record<string, string>;
  query?: Record<string, unknown>;
}

function urlOf(
  path: string,
  params: Record<string, string> = {},
  query: Record<string, unknown> = {},
): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
  // Each name and value as encodeURIComponent writes it (a space is %20), as tests wrote their URLs by hand.
  const rest = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return `${API_PREFIX}${filled}${rest ? `?${rest}` : ''}`;
}

function headersOf(options: RequestOptions): Record<string, string> {
  return {
    ...options.headers,
    ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
  };
}

function build<R extends ApiResponse>(send: (request: Outgoing) => Promise<R>): Api<R> {
  const outgoing = (method: Outgoing['method'], url: string, payload: unknown, options: RequestOptions) =>
    send({
      method,
      url,
      headers: headersOf(options),
      ...(payload === undefined ? {} : { payload }),
      ...(options.remoteAddress === undefined ? {} : { remoteAddress: options.remoteAddress }),
    });
  const checked =
    (method: Outgoing['method']) =>
    (path: string, options: Checked = {}): Promise<R> =>
      outgoing(method, urlOf(path, options.params, options.query), options.body, options);
  return {
    get: checked('GET') as Api<R>['get'],
    post: checked('POST') as Api<R>['post'],
    patch: checked('PATCH') as Api<R>['patch'],
    delete: checked('DELETE') as Api<R>['delete'],
    raw: (method, path, options = {}) =>
      outgoing(method, urlOf(path, {}, options.query), options.payload, options),
  };
}

/** The typed API over `app.inject`, whose answers are inject's own responses. */
export type InjectApi = Api<LightMyRequestResponse>;

/**
 * The typed API over `app.inject`: the answer is inject's own response. `() => ctx.app` reads the app at each
 * request, for a file whose context is made in `beforeAll`.
 */
export function apiOf(app: App | (() => App)): InjectApi;
/**
 * The typed API of a service in another process, over real HTTP at `baseUrl` (its origin); a request with no
 * answer after `timeoutMs` (default 30 s) fails.
 */
export function apiOf(baseUrl: string, options?: { timeoutMs?: number }): Api<HttpResponse>;
export function apiOf(
  target: App | (() => App) | string,
  options: { timeoutMs?: number } = {},
): Api<ApiResponse> {
  if (typeof target !== 'string') {
    const appOf = typeof target === 'function' ? target : () => target;
    return build((request) =>
      appOf().inject({
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload as string | object }),
        ...(request.remoteAddress === undefined ? {} : { remoteAddress: request.remoteAddress }),
      }),
    );
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  return build(async (request): Promise<HttpResponse> => {
    if (request.remoteAddress !== undefined) throw new Error('remoteAddress needs app.inject');
    const json = request.payload !== undefined && typeof request.payload !== 'string';
    const hasType = Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-type');
    const response = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers: { ...(json && !hasType ? { 'content-type': 'application/json' } : {}), ...request.headers },
      ...(request.payload === undefined
        ? {}
        : { body: json ? JSON.stringify(request.payload) : (request.payload as string) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    const headers: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) headers['set-cookie'] = cookies;
    return { statusCode: response.status, headers, body, json: () => JSON.parse(body) };
  });
}

/** The response itself when it is a success; any other answer fails with its request, status and body. */
export function successOf<R extends ApiResponse>(response: R): R {
  if (response.statusCode >= 300) {
    const request = (response as { raw?: { req?: { method?: string; url?: string } } }).raw?.req;
    const sent = request ? `${request.method} ${request.url}: ` : '';
    throw new Error(`${sent}${response.statusCode} ${response.body}`);
  }
  return response;
}

/** The envelope's `data` of a success; any other answer fails with its request, status and body. */
export function dataOf(response: ApiResponse) {
  return successOf(response).json().data;
}
