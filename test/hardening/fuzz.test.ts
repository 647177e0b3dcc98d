/**
 * Property-based fuzzing of every operation of the OpenAPI document the service serves: requests drawn from each
 * operation's schemas (body, query, path) mixed with hostile values, sent unauthenticated, with a session and with
 * the API keys of an account that owns wallets, transactions and letters (so handlers past authentication run): a
 * full key, a read-only one, one bound to its wallet and one with a spend limit.
 * Every answer must be a 4xx or 2xx in the envelope (the sandbox probes: flat) with a code of the closed
 * `ErrorCode` union, and name no stack, file, framework, validator or SQL. Then raw HTTP through a real socket, for
 * what `app.inject` never exercises (Node's HTTP parser, undecodable request targets, oversized headers).
 *
 * The seed changes every run and is printed; `FUZZ_SEED=… FUZZ_RUNS=…` replays or widens a run.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_PATTERN } from '../../src/lib/ids.ts';
import type { TestContext } from '../harness.ts';
import {
  type Holder,
  holdersFixture,
  keepSignedIn,
  type ScopedKeys,
  SWEEP_SECRET,
  scopedKeysOf,
} from './fixture.ts';
import {
  type Answer,
  API,
  fetchOperations,
  fillPath,
  type JsonSchema,
  type Operation,
  problemsOf,
  resourceOfPathId,
} from './openapi.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SOCKET_RUNS = Math.max(50, RUNS * 5);
console.log(
  `fuzz: seed ${SEED}, ${RUNS} runs per operation (replay with FUZZ_SEED=${SEED}; FUZZ_RUNS widens)`,
);

let ctx: TestContext;
let owner: Holder;
let other: Holder;
let operations: Operation[];
/** The owner's read-only, wallet-bound and spend-limited keys. */
let scoped: ScopedKeys;
/** Values a client of the owner could know, by field name: its ids, the other account's, codes, notas. */
const pools: Record<string, unknown[]> = {};

// ---------------------------------------------------------------------------------------------------------
// Hostile values. Raw JSON text (numerals JavaScript cannot hold, nesting) travels as `Raw` through the body.

class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

function serialize(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${serialize(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udbff',
  '',
  ' ',
  '\t1',
  '1\n',
  '\u00a01',
  '\ufeff1',
  ' 1 ',
  '1e3',
  '0x10',
  '-1',
  '-0',
  '0',
  '0.0000001',
  '1.',
  '.5',
  '1,5',
  '１',
  '١٢٣',
  'NaN',
  'Infinity',
  '1e400',
  '99999999999999999999',
  '1.000000000000000000000000001',
  "' OR '1'='1",
  '"; drop table users; --',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '%00',
  '%ff',
  '\u202e',
  '𝕏',
  '$' + '{jndi:ldap://x}',
  'null',
  'true',
  '__proto__',
  'constructor',
  `svc_sk_${'A'.repeat(43)}`,
  '0x000000000000000000000000000000000000dEaD',
  '0x0000000000000000000000000000000000000000',
  'AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG',
];

const RAW_NUMERALS = [
  '1e400',
  '-1e400',
  '99999999999999999999',
  '-99999999999999999999',
  '1e-400',
  '-1',
  '0',
  '-0',
  '0.5',
  '1.7976931348623157e308',
  '9007199254740993',
  '1E2',
  '365.0',
  '366',
  '1.5',
];

function nestedText(depth: number, open: string, close: string): string {
  return `${open.repeat(depth)}${close.repeat(depth)}`;
}

const overLongString = fc
  .constantFrom(65, 101, 201, 256, 501, 1001, 65_537, 200_000)
  .chain((length) => fc.constantFrom('x', 'é', '𝕏').map((unit) => unit.repeat(length)));

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: overLongString },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 8 }),
        fc.constantFrom('\ud800', '\udc00', '\u0000'),
        fc.string({ maxLength: 8 }),
      )
      .map(([before, bad, after]) => `${before}${bad}${after}`),
  },
);

/** Any JSON type, with hostile scalars, raw numerals and deep nesting. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 3, arbitrary: fc.constantFrom(...RAW_NUMERALS).map((text) => new Raw(text)) },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, [], {}) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(10, 63, 64, 65, 200, 5000), fc.constantFrom(['[', ']'], ['{"a":', '}']))
      .map(
        ([depth, [open, close]]) =>
          new Raw(
            open === '['
              ? nestedText(depth, '[', ']')
              : `${open.repeat(depth)}1${(close as string).repeat(depth)}`,
          ),
      ),
  },
);

// ---------------------------------------------------------------------------------------------------------
// Values from a schema, mixed with the pools and the hostile values.

function decimalString(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('1', '0.5', '1.00', '2', '0.000001', '10', '1000000') },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.nat(2_000_000), fc.option(fc.nat(9_999_999), { nil: undefined }))
        .map(([whole, fraction]) => (fraction === undefined ? String(whole) : `${whole}.${fraction}`)),
    },
  );
}

/** `arbitrary` one time in four, else `nothing`. */
function nowAndThen<T, N>(arbitrary: fc.Arbitrary<T>, nothing: N): fc.Arbitrary<T | N> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(nothing) }, { weight: 1, arbitrary });
}

/**
 * How hostile a generated value is: `clean` keeps to the schema and what the owner knows (so requests get through
 * validation into the handlers), `dirty` mixes hostile values in at every level.
 */
type Mode = 'clean' | 'dirty';

function schemaValue(schema: JsonSchema, name: string, depth: number, mode: Mode): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((variant) => schemaValue(variant, name, depth, mode)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([key, value]) => [key, valueFor(value, key, mode, depth + 1)]),
        ),
        { requiredKeys: Object.keys(properties).filter((key) => required.has(key) || key === 'amount') },
      );
      if (mode === 'clean') return record;
      // Now and then a property the schema does not know, or a dangerous name.
      const extra = nowAndThen(
        fc.dictionary(
          fc.oneof(fc.constantFrom('__proto__', 'constructor', 'a\u0000'), fc.string({ maxLength: 8 })),
          hostileValue,
          { minKeys: 1, maxKeys: 2 },
        ),
        undefined,
      );
      return fc.tuple(record, extra).map(([value, more]) => (more ? { ...more, ...value } : value));
    }
    case 'array':
      return fc.array(valueFor(schema.items ?? {}, name, mode, depth + 1), { maxLength: 3 });
    case 'integer':
    case 'number':
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000_000, -1_000_000),
        max: Math.min(schema.maximum ?? 1_000_000, 1_000_000),
      });
    case 'boolean':
      return fc.boolean();
    case 'string':
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
      if (schema.format === 'email' || name === 'email') return fc.emailAddress();
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
    default:
      // No declared type: amounts, parsed by code.
      return decimalString();
  }
}

/** A value for the field `name`: from its schema, from what the owner knows, or (when dirty) hostile. */
function valueFor(schema: JsonSchema, name: string, mode: Mode, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 4) return hostileValue;
  const choices: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 5, arbitrary: schemaValue(schema, name, depth, mode) },
  ];
  if (mode === 'dirty') choices.push({ weight: 3, arbitrary: hostileValue });
  const pool = pools[name];
  if (pool?.length) choices.push({ weight: mode === 'clean' ? 10 : 3, arbitrary: fc.constantFrom(...pool) });
  return fc.oneof(...choices);
}

// ---------------------------------------------------------------------------------------------------------
// URLs: path parameters and query strings, with undecodable and over-long encodings.

/** Percent-encodes every byte of the UTF-8 of `text` that is not unreserved (lone surrogates become U+FFFD). */
function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

const BAD_ENCODINGS = [
  '%ff',
  '%',
  '%zz',
  '%E0%A4%A',
  '%c0%80',
  '%ed%a0%80',
  '%2e%2e',
  '%2F',
  '..',
  '%00',
  '%u0041',
  '%%',
  ';',
  '%20',
  'a'.repeat(513),
  'a'.repeat(5000),
];

const badSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...BAD_ENCODINGS),
  hostileString.filter((text) => text.length < 2000).map(percentEncode),
);

function pathValue(operation: Operation): fc.Arbitrary<string> {
  const kind = resourceOfPathId(operation.path);
  const own = pools[`own ${kind}`] as string[];
  const foreign = pools[`foreign ${kind}`] as string[];
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...own) },
    { weight: 2, arbitrary: fc.constantFrom(...foreign) },
    { weight: 2, arbitrary: fc.stringMatching(new RegExp(ID_PATTERN)) },
    { weight: 3, arbitrary: badSegment },
  );
}

function queryPart(name: string, schema: JsonSchema): fc.Arbitrary<string | null> {
  const encoded = (value: unknown) =>
    `${percentEncode(name)}=${value instanceof Raw ? percentEncode(value.text) : percentEncode(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`;
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(null) },
    { weight: 5, arbitrary: valueFor(schema, name, 'clean').map(encoded) },
    { weight: 2, arbitrary: valueFor(schema, name, 'dirty').map(encoded) },
    { weight: 1, arbitrary: badSegment.map((bad) => `${name}=${bad}`) },
    // The same parameter twice becomes an array.
    {
      weight: 1,
      arbitrary: fc
        .tuple(valueFor(schema, name, 'dirty'), valueFor(schema, name, 'dirty'))
        .map(([a, b]) => `${encoded(a)}&${encoded(b)}`),
    },
  );
}

// ---------------------------------------------------------------------------------------------------------
// One request.

type Credential =
  | 'none'
  | 'session'
  | 'api key'
  | 'read-only key'
  | 'bound key'
  | 'limited key'
  | 'operator secret'
  | 'forged';

/** Header values a client can send (Latin-1, no control characters but tab). */
const headerText = hostileString.map((text) => text.replace(/[^\t\x20-\x7e\xa0-\xff]/g, '').slice(0, 8000));

/** A credential of the right form with anything inside: a bearer token, a session cookie, an operator secret. */
const forgedCredential: fc.Arbitrary<Record<string, string>> = fc.oneof(
  headerText.map((text) => ({ authorization: `Bearer ${text}` })),
  headerText.map((text) => ({ authorization: `Bearer svc_sk_${text}` })),
  headerText.map((text) => ({ authorization: text })),
  headerText.map((text) => ({ cookie: `svc_session=${text}` })),
  headerText.map((text) => ({ cookie: `svc_session=${encodeURIComponent(text)}; svc_session=x` })),
  headerText.map((text) => ({ 'x-sweep-secret': text })),
);

interface FuzzRequest {
  credential: Credential;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** Mostly what a client sends; now and then a missing, duplicated, mistyped or foreign content type. */
const contentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json; charset=latin1',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom<string | null>(
      'application/json, application/json',
      'application/json, text/plain',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'application/jsonx',
      '',
      null,
    ),
  },
);

/** Whole bodies no schema describes: empty, not JSON, wrong top-level types, too deep, too large, bad bytes. */
const strangeBody: fc.Arbitrary<string | Buffer> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'null',
    '[]',
    '"text"',
    '42',
    'true',
    '{',
    '{"a":',
    '{"a":1}}',
    '{"a":1,"a":2}',
    '\ufeff{}',
    '{"\\u0000":1}',
    '{"a":"\\ud800"}',
    "{'a':1}",
    '{"a":NaN}',
    '{"a":1e400}',
    nestedText(65, '[', ']'),
    nestedText(5000, '[', ']'),
    `{"a":${nestedText(4400, '[', ']')}}`,
  ),
  fc.constant(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
  fc.constant(`{"a":"${'x'.repeat(1024 * 1024 + 10)}"}`),
);

function requestArbitrary(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const pathNames = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  const path = fc
    .tuple(...pathNames.map(() => pathValue(operation)))
    .map((values) =>
      fillPath(operation.path, Object.fromEntries(pathNames.map((name, i) => [name, values[i] as string]))),
    );
  const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
  const query = fc
    .tuple(
      ...queryParameters.map((parameter) => queryPart(parameter.name, parameter.schema)),
      nowAndThen(
        fc.tuple(hostileString, hostileString).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`),
        null,
      ),
    )
    .map((parts) => parts.filter((part): part is string => part !== null).join('&'));
  const writes = operation.method !== 'GET';
  const body: fc.Arbitrary<string | Buffer | undefined> = operation.body
    ? fc.oneof(
        { weight: 6, arbitrary: valueFor(operation.body, '', 'clean').map(serialize) },
        { weight: 6, arbitrary: valueFor(operation.body, '', 'dirty').map(serialize) },
        { weight: 2, arbitrary: strangeBody },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : writes
      ? fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: strangeBody })
      : fc.constant(undefined);
  const headerParameters = operation.parameters.filter((parameter) => parameter.in === 'header');
  const headers = fc
    .tuple(
      contentType,
      ...headerParameters.map((parameter) =>
        fc.option(
          fc.oneof(
            fc.string({ minLength: 1, maxLength: 300 }),
            fc.constantFrom(' ', 'x'.repeat(256), 'x'.repeat(8000), '\t', 'é'),
            ...(pools[parameter.name]?.length
              ? [fc.constantFrom(...(pools[parameter.name] as string[]))]
              : []),
          ),
          { nil: undefined },
        ),
      ),
    )
    .map(([contentType, ...values]) => {
      const out: Record<string, string> = {};
      if (contentType !== null) out['content-type'] = contentType;
      headerParameters.forEach((parameter, i) => {
        const value = values[i];
        // Latin-1 travels as bytes; anything beyond is not a header value any client can send.
        if (typeof value === 'string' && /^[\t\x20-\x7e\xa0-\xff]*$/.test(value)) out[parameter.name] = value;
      });
      return out;
    });
  return fc
    .record({
      credential: fc.constantFrom<Credential>(
        'none',
        'session',
        'session',
        'api key',
        'api key',
        'read-only key',
        'bound key',
        'limited key',
        'forged',
        ...(operation.auth === 'operator' ? (['operator secret', 'operator secret'] as const) : []),
      ),
      forged: forgedCredential,
      path,
      query,
      body,
      headers,
    })
    .map(({ credential, forged, path: filled, query: search, body: payload, headers: sent }) => ({
      credential,
      url: `${API}${filled}${search ? `?${search}` : ''}`,
      headers: credential === 'forged' ? { ...sent, ...forged } : sent,
      ...(payload === undefined ? {} : { payload }),
    }));
}

function describeRequest(operation: Operation, request: FuzzRequest): string {
  const payload =
    request.payload === undefined
      ? ''
      : typeof request.payload === 'string'
        ? request.payload
        : request.payload.toString('latin1');
  return `${operation.method} ${request.url} ${JSON.stringify(request.headers)} ${payload}`;
}

function short(text: string, max = 400): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

function credentialHeaders(credential: Credential): Record<string, string> {
  if (credential === 'session') return owner.caller.headers;
  if (credential === 'api key') return owner.key.headers;
  if (credential === 'read-only key') return scoped.readOnly;
  if (credential === 'bound key') return scoped.bound;
  if (credential === 'limited key') return scoped.limited;
  if (credential === 'operator secret') return { 'x-sweep-secret': SWEEP_SECRET };
  return {};
}

/** Answers by operation, status and code, to show (and check) that the requests reach the handlers. */
const statuses = new Map<string, Map<string, number>>();

async function send(operation: Operation, request: FuzzRequest): Promise<void> {
  const sent = describeRequest(operation, request);
  const response = await ctx.app.inject({
    method: operation.method,
    url: request.url,
    headers: { ...request.headers, ...credentialHeaders(request.credential) },
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  });
  const seen = statuses.get(operation.name) ?? new Map<string, number>();
  const code = /"code":"(\w+)"/.exec(response.body)?.[1] ?? '';
  const outcome = `${response.statusCode} ${code}`.trim();
  seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
  if (process.env.FUZZ_DEBUG === operation.name)
    console.log(short(sent, 300), '→', short(response.body, 300));
  statuses.set(operation.name, seen);
  const problems = problemsOf(
    { status: response.statusCode, headers: response.headers, text: response.body },
    { flat: operation.flat, request: sent, url: request.url, documented: operation.documentedErrors },
  );
  if (problems.length > 0) {
    throw new Error(
      `${problems.join('; ')}\n  request (${request.credential}): ${short(sent)}\n  answer: ${response.statusCode} ${short(response.body)}\n  seed: FUZZ_SEED=${SEED}`,
    );
  }
  if (operation.method !== 'GET' && response.statusCode < 300) await keepSignedIn(ctx, owner);
}

beforeAll(async () => {
  ({ ctx, owner, other } = await holdersFixture());
  scoped = await scopedKeysOf(ctx, owner);
  operations = await fetchOperations(async (url) => {
    const response = await ctx.app.inject({ url });
    return { status: response.statusCode, body: response.json() };
  });
  const exported = await ctx.app.inject({
    method: 'POST',
    url: `${API}/wallets/${owner.wallet.id}/export`,
    headers: owner.caller.headers,
    payload: { passphrase: 'correct horse battery staple' },
  });
  const receipt = await ctx.app.inject({
    url: `${API}/transactions/${owner.transactionId}/nota`,
    headers: owner.caller.headers,
  });
  // A key of the owner's that the fuzzer may revoke, never the one it sends.
  const spare = await ctx.app.inject({
    method: 'POST',
    url: `${API}/keys`,
    headers: owner.caller.headers,
    payload: { name: 'spare' },
  });
  Object.assign(pools, {
    walletId: [owner.wallet.id, other.wallet.id],
    claimCode: [
      owner.letter.claimCode,
      other.letter.claimCode,
      other.letter.claimCode.replaceAll('-', '').toLowerCase(),
    ],
    code: [owner.letter.claimCode, other.letter.claimCode, '123456'],
    nota: [exported.json().data.nota, receipt.json().data.nota],
    passphrase: ['correct horse battery staple'],
    email: [owner.caller.email, other.caller.email],
    // The owner's (a login that succeeds, a signup password that meets the policy) or a wrong one.
    password: [owner.caller.password, 'Wrong-Password-1'],
    currentPassword: ['Wrong-Password-1'],
    to: [other.wallet.address, owner.wallet.address],
    address: [other.wallet.address],
    'x-sweep-secret': [SWEEP_SECRET],
    'idempotency-key': ['fuzz-key-1', 'fuzz-key-2'],
    'own wallet': [owner.wallet.id],
    'own key': [spare.json().data.key.id],
    'own transaction': [owner.transactionId],
    'own letter': [owner.letter.id],
    'own webhook': [owner.webhookId],
    'own passkey': [owner.passkeyId],
    'foreign wallet': [other.wallet.id],
    'foreign key': [other.key.id],
    'foreign transaction': [other.transactionId],
    'foreign letter': [other.letter.id],
    'foreign webhook': [other.webhookId],
    'foreign passkey': [other.passkeyId],
  });
}, 180_000);
afterAll(() => ctx?.close());

describe('fuzzing every documented operation through app.inject', () => {
  it('reads the operations from the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(40);
  });

  it('answers every request in the envelope with a stable code, never a 5xx, never a leak', async () => {
    const failures: string[] = [];
    for (const [index, operation] of operations.entries()) {
      try {
        await fc.assert(
          fc.asyncProperty(requestArbitrary(operation), (request) => send(operation, request)),
          { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
        );
      } catch (error) {
        failures.push(`${operation.name}: ${(error as Error).message}`);
      }
    }
    if (process.env.FUZZ_STATS) {
      for (const [name, seen] of statuses) console.log(name, JSON.stringify(Object.fromEntries(seen)));
    }
    expect(failures).toEqual([]);
    // The requests get past authentication and validation into the handlers: most operations answered a success.
    const succeeded = operations.filter((operation) =>
      [...(statuses.get(operation.name)?.keys() ?? [])].some((outcome) => outcome.startsWith('2')),
    );
    expect(succeeded.length / operations.length).toBeGreaterThan(0.6);
  }, 240_000);
});

describe('the document against the routes', () => {
  it('marks a request body required only where a request without one is refused', async () => {
    const wrong: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.bodyRequired)) {
      const pathNames = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
      const ids = Object.fromEntries(
        pathNames.map((name) => [
          name,
          (pools[`own ${resourceOfPathId(operation.path)}`] as string[])[0] as string,
        ]),
      );
      const credential =
        operation.auth === 'either' || operation.auth === 'session'
          ? 'session'
          : operation.auth === 'operator'
            ? 'operator secret'
            : 'none';
      const response = await ctx.app.inject({
        method: operation.method,
        url: `${API}${fillPath(operation.path, ids)}`,
        headers: credentialHeaders(credential),
      });
      if (response.statusCode < 300) wrong.push(`${operation.name}: ${response.statusCode} without a body`);
      else if (response.statusCode !== 400)
        wrong.push(`${operation.name}: ${response.statusCode} ${response.body}`);
    }
    expect(wrong).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Raw HTTP through a real socket: what Node's parser and the router see before any route does.

async function rawExchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', done);
    socket.on('error', done);
    socket.setTimeout(5000, () => socket.destroy());
    socket.write(request);
  });
}

/** Status, headers and body of a raw HTTP/1.1 answer (one answer; the request asked to close). */
function parseRaw(answer: string): Answer | null {
  // Node may send `100 Continue` first: the answer is the one after it.
  const final = answer.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
  const match = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(final);
  if (!match) return null;
  const headers: Record<string, string> = {};
  for (const line of (match[2] as string).split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let text = match[3] as string;
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    let decoded = '';
    let rest = text;
    for (;;) {
      const line = /^([0-9a-f]+)\r\n/i.exec(rest);
      if (!line) break;
      const size = Number.parseInt(line[1] as string, 16);
      if (size === 0) break;
      decoded += rest.slice(line[0].length, line[0].length + size);
      rest = rest.slice(line[0].length + size + 2);
    }
    text = decoded;
  }
  return { status: Number(match[1]), headers, text };
}

describe('fuzzing raw HTTP through a real socket', () => {
  let port = 0;
  beforeAll(async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });

  const method = fc.constantFrom(
    'GET',
    'POST',
    'PATCH',
    'DELETE',
    'PUT',
    'OPTIONS',
    'HEAD',
    'BREW',
    'CONNECT',
    'TRACE',
    'PRI',
    'get',
    'G@T',
  );
  const version = fc.constantFrom(
    'HTTP/1.1',
    'HTTP/1.1',
    'HTTP/1.1',
    'HTTP/1.0',
    'HTTP/2.0',
    'HTTP/9.9',
    'HTTPS/1.1',
    'HTTP/1.1x',
  );
  const strangeHeader = fc.constantFrom(
    `X-Big: ${'a'.repeat(20_000)}`,
    'X-Ctl: a\u0001b',
    'X-Fold: a\r\n folded',
    'Bad Header',
    ': empty-name',
    'Content-Length: abc',
    'Content-Length: 2\r\nContent-Length: 3',
    'Transfer-Encoding: chunked\r\nContent-Length: 2',
    'Transfer-Encoding: gzip',
    'Cookie: svc_session=%ff%00',
    'Authorization: Bearer svc_sk_\u00ff',
    `Authorization: ${'B'.repeat(9000)}`,
    'Content-Type: application/json\r\nContent-Type: text/plain',
    'Idempotency-Key: \u00e9',
  );

  function target(): fc.Arbitrary<string> {
    const documented = fc.constantFrom(...operations.map((operation) => operation.path));
    return fc.oneof(
      fc.tuple(documented, badSegment).map(([path, bad]) => `${API}${path.replace(/\{\w+\}/g, bad)}`),
      fc
        .tuple(documented, badSegment)
        .map(([path, bad]) => `${API}${path.replace(/\{\w+\}/g, 'abc')}?${bad}=${bad}`),
      fc.constantFrom(
        '*',
        'example.com:443',
        'http://example.com/api/v1/me',
        '//api/v1/me',
        `${API}/me#frag`,
        `${API}/%`,
        `${API}/wallets/%ff`,
        `${API}/transfer/letter/%c0%af`,
        `${API}/wallets/${'a'.repeat(70_000)}`,
        `${API}/me\u00ff`,
        `${API}/../../etc/passwd`,
        `${API}/me?${'a=1&'.repeat(3000)}`,
      ),
    );
  }

  it('answers whatever arrives in the envelope, never a 5xx, never a leak', async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        method,
        target(),
        version,
        fc.option(strangeHeader, { nil: undefined, freq: 2 }),
        fc.boolean(),
        fc.option(fc.constantFrom('{"email":"a","password":"b"}', '{', nestedText(100, '[', ']'), '\u0000'), {
          nil: undefined,
        }),
        async (verb, path, httpVersion, header, withHost, body) => {
          const bytes = body === undefined ? 0 : Buffer.byteLength(body);
          const lines = [
            `${verb} ${path} ${httpVersion}`,
            ...(withHost ? ['Host: 127.0.0.1'] : []),
            'Connection: close',
            ...(header ? [header] : []),
            ...(body === undefined ? [] : ['Content-Type: application/json', `Content-Length: ${bytes}`]),
          ];
          const request = `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
          const raw = await rawExchange(port, Buffer.from(request, 'latin1'));
          const answer = parseRaw(raw);
          const where = `${short(JSON.stringify(request), 300)} → ${short(JSON.stringify(raw), 300)}`;
          if (!answer) {
            failures.push(`no HTTP answer: ${where}`);
            return;
          }
          // A probe answers flat once its route is known; what Node's parser refuses first is the envelope.
          const probe = operations.some(
            (operation) => operation.flat && `${API}${operation.path}` === path.split('?')[0],
          );
          const envelope = problemsOf(answer, { flat: false, request, url: path });
          // A HEAD answer has no body to check; its status still counts.
          const problems =
            verb === 'HEAD'
              ? answer.status >= 500
                ? [`a ${answer.status}`]
                : []
              : probe && envelope.length > 0
                ? problemsOf(answer, { flat: true, request, url: path })
                : envelope;
          if (problems.length) failures.push(`${problems.join('; ')}: ${where}`);
        },
      ),
      { seed: SEED, numRuns: SOCKET_RUNS },
    );
    expect([...new Set(failures)].slice(0, 20)).toEqual([]);
  }, 120_000);
});
