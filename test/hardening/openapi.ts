/**
 * The API as its own OpenAPI document describes it, read from the running service: the operations that the fuzzer,
 * the authorization matrix and the production run iterate, so a new route is covered by all three the moment it
 * is registered, without a test written for it. Also the checks every answer of the service must pass.
 */
import fc from 'fast-check';
import type { AuthMode } from '../../src/http/auth.ts';
import { type ErrorCode, statusOf } from '../../src/lib/errors.ts';

export type { AuthMode };

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  minProperties?: number;
  description?: string;
  $ref?: string;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** `POST /wallets/{id}/export`: method and the path as documented (relative to `/api/v1`). */
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  path: string;
  auth: AuthMode;
  /** The two sandbox probes answer flat bodies (`{ok: false, error: string}`), by the interface. */
  flat: boolean;
  parameters: Parameter[];
  body: JsonSchema | null;
  /** The document says a request without a body is incomplete. */
  bodyRequired: boolean;
  /** The error answers it documents, as `status code` (`404 not_found`), from each response's `x-error-codes`. */
  documentedErrors: ReadonlySet<string>;
}

export const API = '/api/v1';

/** The sandbox probes: "Two unauthenticated sandbox probes exist with a flat response shape" (the interface). */
const FLAT_PROBES = new Set(['GET /sandbox', 'POST /sandbox']);

interface OpenApiOperation {
  security?: Record<string, string[]>[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { 'x-error-codes'?: string[] }>;
}

/**
 * Who may call an operation, as its OpenAPI `security` says (generated from each route's `config.auth`, which
 * every API route must declare: `buildApp` refuses a route without one).
 */
export function authOf(security: Record<string, string[]>[] | undefined): AuthMode {
  const schemes = (security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.length === 0) return 'none';
  if (schemes.includes('apiKey') && schemes.includes('session')) return 'either';
  if (schemes.length === 1 && schemes[0] === 'session') return 'session';
  if (schemes.length === 1 && schemes[0] === 'operatorSecret') return 'operator';
  throw new Error(`unknown security requirement ${JSON.stringify(security)}`);
}

/** Every operation of the OpenAPI document the service serves, `$ref`s resolved. */
export function operationsOf(document: {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}): Operation[] {
  const components = document.components?.schemas ?? {};
  const resolve = (schema: JsonSchema | undefined, depth = 0): JsonSchema | undefined => {
    if (!schema || depth > 20) return schema;
    if (schema.$ref) return resolve(components[schema.$ref.replace('#/components/schemas/', '')], depth + 1);
    const out: JsonSchema = { ...schema };
    if (schema.properties) {
      out.properties = Object.fromEntries(
        Object.entries(schema.properties).map(([key, value]) => [key, resolve(value, depth + 1) ?? {}]),
      );
    }
    if (schema.items) out.items = resolve(schema.items, depth + 1) ?? {};
    if (schema.anyOf) out.anyOf = schema.anyOf.map((item) => resolve(item, depth + 1) ?? {});
    if (schema.oneOf) out.oneOf = schema.oneOf.map((item) => resolve(item, depth + 1) ?? {});
    return out;
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const upper = method.toUpperCase() as Operation['method'];
      const name = `${upper} ${path}`;
      operations.push({
        name,
        method: upper,
        path,
        auth: authOf(operation.security),
        flat: FLAT_PROBES.has(name),
        parameters: (operation.parameters ?? []).map((parameter) => ({
          name: parameter.name,
          in: parameter.in as Parameter['in'],
          required: parameter.required ?? false,
          schema: resolve(parameter.schema) ?? {},
        })),
        body: resolve(operation.requestBody?.content?.['application/json']?.schema) ?? null,
        bodyRequired: operation.requestBody?.required ?? false,
        documentedErrors: new Set(
          Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
            (response['x-error-codes'] ?? []).map((code) => `${status} ${code}`),
          ),
        ),
      });
    }
  }
  return operations;
}

/** Fetches the document from the service (any transport: `app.inject` or real HTTP). */
export async function fetchOperations(
  get: (url: string) => Promise<{ status: number; body: unknown }>,
): Promise<Operation[]> {
  const response = await get(`${API}/openapi.json`);
  if (response.status !== 200) throw new Error(`openapi.json: ${response.status}`);
  return operationsOf(response.body as Parameters<typeof operationsOf>[0]);
}

/** The path with its `{name}` parameters filled in (values are put in as given: encode them first if needed). */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} of ${path}`);
    return value;
  });
}

/**
 * What kind of resource a path parameter, query parameter or body field names, so a test can put an id of the
 * right kind (its own, another account's) there. A new kind of id in the API fails the tests until it is added.
 */
export type ResourceKind = 'wallet' | 'key' | 'transaction' | 'letter' | 'webhook' | 'passkey';

export function resourceOfPathId(path: string): ResourceKind {
  if (path.startsWith('/wallets/{')) return 'wallet';
  if (path.startsWith('/keys/{')) return 'key';
  if (path.startsWith('/transactions/{')) return 'transaction';
  if (path.startsWith('/transfer/letter/{')) return 'letter';
  // A delivery id is looked up under its endpoint: another account's endpoint id is what must read as not found.
  if (path.startsWith('/webhooks/{')) return 'webhook';
  if (path.startsWith('/me/passkeys/{')) return 'passkey';
  throw new Error(`which resource does the id of ${path} name? Add it to resourceOfPathId.`);
}

/** Body and query fields that name one of the caller's resources by id (`walletIds`: a list of them). */
export const ID_FIELDS: Readonly<Record<string, ResourceKind>> = { walletId: 'wallet', walletIds: 'wallet' };

/** The not-found code of each resource (the interface: letters answer `letter_not_found`). */
export function notFoundCodeOf(kind: ResourceKind): 'not_found' | 'letter_not_found' {
  return kind === 'letter' ? 'letter_not_found' : 'not_found';
}

// ---------------------------------------------------------------------------------------------------------
// Plausible requests: what a careful client would send, from the schema and the field's name.

export interface Known {
  /** Values by field name (walletId, claimCode, nota, currentPassword, …), used where the field appears. */
  fields: Record<string, unknown>;
}

const PLAUSIBLE_BY_NAME: Record<string, unknown> = {
  amount: '1',
  to: '0x000000000000000000000000000000000000dEaD',
  address: '0x000000000000000000000000000000000000dEaD',
  country: 'GB',
  password: 'Correct-Horse-9',
  newPassword: 'Another-Horse-10',
  currentPassword: 'Correct-Horse-9',
  passphrase: 'correct horse battery staple',
  code: '123456',
  deliveryMethod: 'standard',
};

let emails = 0;

function sampleOf<T>(arbitrary: fc.Arbitrary<T>): T {
  return fc.sample(arbitrary, { numRuns: 1, seed: 42 })[0] as T;
}

/** A value of `schema` a careful client would send for a field called `name`. */
export function plausible(schema: JsonSchema, name: string, known: Known): unknown {
  if (name in known.fields) return known.fields[name];
  if (name === 'email' || schema.format === 'email') {
    emails += 1;
    return `plausible${emails}-${Date.now().toString(36)}@example.com`;
  }
  if (name in PLAUSIBLE_BY_NAME && schema.type !== 'object') return PLAUSIBLE_BY_NAME[name];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const first = variants.find((variant) => variant.type !== 'null') ?? variants[0] ?? {};
    return plausible(first, name, known);
  }
  if (schema.default !== undefined) return schema.default;
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      for (const [key, property] of Object.entries(properties)) {
        // Optional fields only when the client would know them, or when the schema needs at least one.
        const wanted =
          required.has(key) ||
          key in known.fields ||
          key === 'amount' ||
          (schema.minProperties !== undefined && Object.keys(out).length < schema.minProperties);
        if (wanted) out[key] = plausible(property, key, known);
      }
      return out;
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string': {
      if (schema.pattern) return sampleOf(fc.stringMatching(new RegExp(schema.pattern)));
      if (schema.format === 'date-time') return new Date().toISOString();
      const length = Math.max(schema.minLength ?? 1, Math.min(9, schema.maxLength ?? 9));
      return 'plausible'.padEnd(length, 'x').slice(0, length);
    }
    default:
      // No declared type (amounts are parsed by code): a decimal string is what clients send.
      return '1';
  }
}

/** A plausible request for an operation: path, query and body. */
export function plausibleRequest(
  operation: Operation,
  known: Known,
  pathIds: Record<string, string>,
): { url: string; body: unknown; headers: Record<string, string> } {
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of operation.parameters) {
    if (parameter.in === 'query' && (parameter.required || parameter.name in known.fields)) {
      query.set(parameter.name, String(plausible(parameter.schema, parameter.name, known)));
    }
    if (parameter.in === 'header' && parameter.name in known.fields) {
      headers[parameter.name] = String(known.fields[parameter.name]);
    }
  }
  const search = query.toString();
  const url = `${API}${fillPath(operation.path, pathIds)}${search ? `?${search}` : ''}`;
  const body = operation.body ? plausible(operation.body, '', known) : undefined;
  return { url, body, headers };
}

// ---------------------------------------------------------------------------------------------------------
// What every answer must be.

export const AUTH_CODES: ReadonlySet<string> = new Set([
  'unauthenticated',
  'invalid_api_key',
  'session_expired',
  'session_required',
  'account_disabled',
]);

export function isErrorCode(code: unknown): code is ErrorCode {
  try {
    return typeof code === 'string' && typeof statusOf(code as ErrorCode) === 'number';
  } catch {
    return false;
  }
}

/**
 * What must never be in an answer: a stack, a file path, the framework's or the validator's name or error codes,
 * SQL or the database's own words. Matched case-insensitively where it cannot be a word of ours.
 */
const LEAKS: ReadonlyArray<[string, RegExp]> = [
  ['a stack frame', /\bat [\w.<>$]+ \(|\bat (?:file|node):|\n\s+at /],
  ['a file path', /(?:\/(?:work|home|tmp|usr|src|app|node_modules)\/)|\b[\w-]+\.(?:ts|js|mjs|cjs):\d+/],
  ['a framework error code', /\bFST_[A-Z_]+/],
  ['the framework', /fastify/i],
  ['the validator', /\bajv\b/i],
  [
    'SQL',
    /\b(?:SELECT\s+[\w"*]|INSERT\s+INTO|UPDATE\s+"?\w+"?\s+SET|DELETE\s+FROM|WHERE\s+"|RETURNING\s)|syntax error at|violates [\w ]*constraint|duplicate key value|invalid input syntax|relation "|column "|SQLSTATE|drizzle|pglite|postgres/i,
  ],
];

/**
 * The leaks found in `text` (an answer's body), ignoring any the request itself carried (an echo of the
 * client's own input, such as the sandbox echo or a path in a not-found message, is not a leak).
 */
export function leaksIn(text: string, request: string): string[] {
  const found: string[] = [];
  for (const [what, pattern] of LEAKS) {
    const match = pattern.exec(text);
    if (match && !request.toLowerCase().includes(match[0].toLowerCase())) found.push(`${what}: ${match[0]}`);
  }
  return found;
}

/**
 * The statuses a code may have besides its own (src/lib/errors.ts), where the interface names two: a TOTP code and a
 * passkey at login are 401, a receipt of a QUEUED transaction 409; `invalid_request` carries the status of what the
 * framework refused (a 4xx).
 */
const OTHER_STATUSES: Partial<Record<ErrorCode, (status: number) => boolean>> = {
  invalid_totp_code: (status) => status === 401,
  passkey_verification_failed: (status) => status === 401,
  receipt_unavailable: (status) => status === 409,
  invalid_request: (status) => status >= 400 && status < 500,
};

function statusFits(code: ErrorCode, status: number): boolean {
  return statusOf(code) === status || (OTHER_STATUSES[code]?.(status) ?? false);
}

export interface Answer {
  status: number;
  /** By lower-case name. */
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

function headerOf(answer: Answer, name: string): string {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value === undefined ? '' : String(value);
}

/**
 * The problems of one answer: a 5xx that is not allowed, a body outside the envelope (or the probes' flat shape),
 * a code outside the closed `ErrorCode` union or not of its status, a leak, a missing `nosniff` (every answer) or
 * `no-store` (every API answer). Empty when the answer is right.
 */
export function problemsOf(
  answer: Answer,
  options: {
    flat: boolean;
    request: string;
    url: string;
    allowed5xx?: ReadonlySet<string>;
    /** The operation's documented errors (`Operation.documentedErrors`): an error answer outside them is a problem. */
    documented?: ReadonlySet<string>;
  },
): string[] {
  const problems: string[] = [];
  let body: unknown;
  const contentType = headerOf(answer, 'content-type');
  const isJson = /^application\/json/i.test(contentType);
  if (headerOf(answer, 'x-content-type-options') !== 'nosniff')
    problems.push('no X-Content-Type-Options: nosniff');
  if (options.url.startsWith(API) && !/\bno-store\b/.test(headerOf(answer, 'cache-control'))) {
    problems.push('an API answer without Cache-Control: no-store');
  }
  if (isJson) {
    try {
      body = JSON.parse(answer.text);
    } catch {
      problems.push('the body is not JSON though its type says so');
    }
  }
  const error = (body as { error?: unknown } | undefined)?.error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (answer.status >= 500 && !(typeof code === 'string' && options.allowed5xx?.has(code))) {
    problems.push(`a ${answer.status} (${String(code)})`);
  }
  if (answer.status >= 400) {
    if (!isJson) problems.push(`an error answered as ${contentType || 'no content type'}`);
    else if (options.flat) {
      if ((body as { ok?: unknown })?.ok !== false || typeof error !== 'string') {
        problems.push('a probe error that is not the flat {ok: false, error: string}');
      }
    } else {
      const message = (error as { message?: unknown } | undefined)?.message;
      if ((body as { ok?: unknown })?.ok !== false || typeof message !== 'string') {
        problems.push('an error outside the envelope {ok: false, error: {code, message}}');
      } else if (!isErrorCode(code)) problems.push(`a code outside the ErrorCode union: ${String(code)}`);
      else if (!statusFits(code, answer.status)) problems.push(`${code} answered with ${answer.status}`);
      else if (
        options.documented &&
        !options.documented.has(`${answer.status} ${code}`) &&
        // A path the router normalized onto no route at all (`/letter/%2e%2e`) is not the operation's answer.
        !(code === 'not_found' && message.startsWith('No route '))
      ) {
        problems.push(`${answer.status} ${code} is not among the operation's documented errors`);
      }
    }
  } else if (isJson && !options.flat && (body as { ok?: unknown })?.ok !== true) {
    problems.push('a success outside the envelope {ok: true, data}');
  }
  // Only errors: a success may rightly return what a client stored earlier (a name, a label).
  if (answer.status >= 400) problems.push(...leaksIn(answer.text, options.request));
  return problems;
}
