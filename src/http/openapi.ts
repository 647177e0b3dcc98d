/**
 * How the OpenAPI document is made from the routes (the two transforms of @fastify/swagger): each operation's
 * security from its `config.auth`, its error responses from the codes it can answer, and the resources with a
 * `title` (Transaction, Letter, …) named once under `components.schemas`, so generated clients get named types.
 */
import { STATUS_CODES } from 'node:http';
import { type ErrorCode, statusOf } from '../lib/errors.ts';
import { type AuthMode, isWrite, type RateClass, rateClassOf } from './auth.ts';

/**
 * An error a route can answer beyond the ones every route of its kind can (see `errorsOf`): a code at its usual
 * status, or `[code, status]` where the interface gives it another (`invalid_totp_code` is 401 at login).
 */
export type DocumentedError = ErrorCode | readonly [ErrorCode, number];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The errors this route answers besides those of its auth mode, budget and input (src/http/openapi.ts). */
    errors?: readonly DocumentedError[];
  }
}

/** Marks, between the two transforms, what `transformObject` needs of a route. */
const OPTIONAL_BODY = 'x-sealpay-optional-body';
const ERRORS = 'x-sealpay-errors';
const FLAT = 'x-sealpay-flat';
/** The codes of one error response, for generators and linters that read more than the description. */
export const ERROR_CODES_EXTENSION = 'x-error-codes';

interface RouteFacts {
  method: string;
  auth: AuthMode;
  rate: RateClass | undefined;
  notFound: 'not_found' | 'letter_not_found' | undefined;
  hasParams: boolean;
  declared: readonly DocumentedError[];
}

/**
 * Every error a route can answer, with its status: what its credential, its budget and its input can fail with
 * (the auth hook, the rate limiter, the JSON parser and the schemas answer these for every route alike), then the
 * route's own (`config.errors`). Sorted by status, then code.
 */
export function errorsOf(route: RouteFacts): Array<[ErrorCode, number]> {
  // Every route: a request without Host, a query string with NUL or a lone surrogate, a fault of ours, and (bound to
  // the loopback) a Host that is not one of the service's names.
  const codes: DocumentedError[] = [
    'invalid_request',
    'validation_error',
    'internal_error',
    'misdirected_request',
  ];
  if (route.auth === 'either' || route.auth === 'session') {
    codes.push('unauthenticated', 'invalid_api_key', 'session_expired', 'account_disabled');
  }
  if (route.auth === 'session') codes.push('session_required');
  // A read-only API key is refused every write a key may make (after the budget, in the auth hook).
  if (route.auth === 'either' && isWrite(rateClassOf(route.method, route.rate)))
    codes.push('insufficient_scope');
  if (route.auth === 'operator') codes.push('unauthenticated', 'configuration_missing');
  if (route.rate !== 'none') codes.push('rate_limited');
  if (route.method !== 'GET') {
    codes.push('invalid_json', 'validation_error', 'unsupported_media_type', 'payload_too_large');
  }
  if (route.hasParams) codes.push(route.notFound ?? 'not_found');
  codes.push(...route.declared);
  const unique = new Map<string, [ErrorCode, number]>();
  for (const entry of codes) {
    const [code, status] = typeof entry === 'string' ? [entry, statusOf(entry)] : entry;
    unique.set(`${status} ${code}`, [code, status]);
  }
  return [...unique.values()].sort(([a, x], [b, y]) => x - y || a.localeCompare(b));
}

interface SwaggerRoute {
  method: string | string[];
  config?: unknown;
}

/** The `transform` option: a route's schema as documented (security, error codes, path without the prefix). */
export function transformRoute(apiPrefix: string) {
  return ({ schema, url, route }: { schema: unknown; url: string; route: SwaggerRoute }) => {
    const config = (route.config ?? {}) as {
      auth?: AuthMode;
      rate?: RateClass;
      notFound?: 'not_found' | 'letter_not_found';
      optionalBody?: boolean;
      flat?: boolean;
      errors?: readonly DocumentedError[];
    };
    const routeSchema = (schema ?? {}) as Record<string, unknown>;
    const auth = config.auth ?? 'none';
    const security: Record<string, string[]>[] = {
      none: [],
      either: [{ apiKey: [] }, { session: [] }],
      session: [{ session: [] }],
      operator: [{ operatorSecret: [] }],
    }[auth];
    const path = url.startsWith(apiPrefix) ? url.slice(apiPrefix.length) || '/' : url;
    const method = Array.isArray(route.method) ? (route.method[0] ?? 'GET') : route.method;
    const errors = errorsOf({
      method,
      auth,
      rate: config.rate,
      notFound: config.notFound,
      hasParams: routeSchema.params !== undefined,
      declared: config.errors ?? [],
    });
    return {
      schema: {
        ...routeSchema,
        security,
        // @fastify/swagger documents every body as required: this mark tells transformObject which ones are not.
        ...(config.optionalBody ? { [OPTIONAL_BODY]: true } : {}),
        ...(config.flat ? { [FLAT]: true } : { [ERRORS]: errors }),
      } as never,
      url: path,
    };
  };
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One documented error response per status, naming its codes. */
function errorResponses(
  errors: Array<[ErrorCode, number]>,
  envelopeRef: string,
  notes: Record<string, string>,
): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, status] of errors) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  const out: Json = {};
  for (const [status, codes] of byStatus) {
    out[String(status)] = {
      description:
        `${STATUS_CODES[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}` +
        (notes[String(status)] ? `. ${notes[String(status)]}` : ''),
      [ERROR_CODES_EXTENSION]: codes,
      content: { 'application/json': { schema: { $ref: envelopeRef } } },
    };
  }
  return out;
}

const FLAT_ERROR = {
  type: 'object',
  required: ['ok', 'error'],
  properties: { ok: { type: 'boolean', enum: [false] }, error: { type: 'string' } },
};

/**
 * Schemas with a `title` (the API's resources) moved under `components.schemas` by that title and referenced, where
 * every occurrence is the same schema; a title used for two different schemas stays inline.
 */
function nameResources(document: Json): void {
  const components = ((document.components as Json).schemas ?? {}) as Json;
  (document.components as Json).schemas = components;
  const found = new Map<string, { schema: Json; text: string } | null>();
  const visit = (node: unknown, collect: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, collect));
    if (!isObject(node)) return node;
    const title = node.title;
    if (typeof title === 'string' && node.type === 'object' && !('$ref' in node)) {
      if (collect) {
        const text = JSON.stringify(node);
        const seen = found.get(title);
        if (seen === undefined) found.set(title, { schema: node, text });
        else if (seen !== null && seen.text !== text) found.set(title, null);
      } else if (found.get(title) && !(title in components)) {
        return { $ref: `#/components/schemas/${title}` };
      }
    }
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(value, collect);
    return out;
  };
  visit(document.paths, true);
  document.paths = visit(document.paths, false);
  for (const [title, entry] of found) {
    if (entry && !(title in components)) components[title] = entry.schema;
  }
}

/** The `transformObject` option: optional bodies, error responses by status and code, named resources. */
export function transformDocument(envelopeId: string) {
  return (document: { openapiObject?: Json; swaggerObject?: Json }): Json => {
    if (!document.openapiObject) return document.swaggerObject ?? {};
    const openapi = document.openapiObject;
    const envelopeRef = `#/components/schemas/${envelopeId}`;
    for (const methods of Object.values((openapi.paths ?? {}) as Record<string, Json>)) {
      for (const operation of Object.values(methods)) {
        if (!isObject(operation)) continue;
        if (OPTIONAL_BODY in operation) {
          delete operation[OPTIONAL_BODY];
          const body = operation.requestBody as { required?: boolean } | undefined;
          if (body) body.required = false;
        }
        const responses = (operation.responses ?? {}) as Json;
        const success = Object.fromEntries(
          Object.entries(responses).filter(([status]) => /^[123]/.test(status)),
        );
        if (FLAT in operation) {
          delete operation[FLAT];
          const flat = {
            description: 'Error: `{ok: false, error: string}`',
            content: { 'application/json': { schema: FLAT_ERROR } },
          };
          operation.responses = { ...success, 400: flat, 421: flat, 500: flat };
          continue;
        }
        const errors = (operation[ERRORS] ?? []) as Array<[ErrorCode, number]>;
        delete operation[ERRORS];
        // What a route says itself of one error status (`response: {500: Type.Ref(ErrorEnvelope, {description})}`).
        const notes: Record<string, string> = {};
        for (const [status, response] of Object.entries(responses)) {
          const description = (response as { description?: unknown }).description;
          if (/^\d+$/.test(status) && typeof description === 'string' && description !== 'Default Response') {
            notes[status] = description;
          }
        }
        operation.responses = { ...success, ...errorResponses(errors, envelopeRef, notes) };
      }
    }
    nameResources(openapi);
    return openapi;
  };
}
