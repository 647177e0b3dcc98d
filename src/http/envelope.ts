import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { ID_PATTERN } from '../lib/ids.ts';

/** What every JSON answer is sent as. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** `{ok: true, data}`: every success response except the sandbox probes. */
export function ok<T>(data: T): { ok: true; data: T } {
  return { ok: true, data };
}

export const ErrorEnvelope = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.Object({
      code: Type.String({ description: 'Stable key clients match on' }),
      message: Type.String(),
      details: Type.Optional(Type.Unknown()),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error' },
);

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ ok: Type.Literal(true), data });
}

/** Response schemas of a route: its success bodies in the envelope, and the error envelope for the rest. */
export function responses(success: Record<number, TSchema>) {
  const out: Record<string, TSchema> = {};
  for (const [status, schema] of Object.entries(success)) out[status] = Envelope(schema);
  out['4xx'] = Type.Ref(ErrorEnvelope);
  out['5xx'] = Type.Ref(ErrorEnvelope);
  return out;
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

/**
 * `schema` or null. A schema of one JSON type becomes a type list (`{type: ['string', 'null'], format, …}`, the
 * OpenAPI 3.1 way): the response serializer tells its two cases apart with `=== null`, where an `anyOf` makes it run
 * Ajv (format checks included) over the value for each branch on every answer. Other schemas stay an `anyOf`.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  return typeof schema.type === 'string'
    ? Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
    : Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}
export const NullableTimestamp = Nullable(Timestamp);
/** A path id. Anything not shaped like one of our ids (NUL, bad encoding, too long) reads as not found. */
export const IdParam = Type.Object({ id: Type.String({ pattern: ID_PATTERN }) });

/**
 * `page`, `pageSize` and `cursor` of a paged list (the interface: page default 1, pageSize default 20, at most 100
 * a page). Pages stop at 1,000,000: past it a number is a mistake or an attack (`1e400` parses as Infinity),
 * answered 400. `page` has no schema default so that `page` and `cursor` given together can be refused.
 */
export const PageQueryFields = {
  page: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        'Page number, default 1 (OFFSET paging: its cost grows with the page number). Not together with `cursor`.',
    }),
  ),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "The previous page's `nextCursor`: the page right after it, in constant time however deep (keyset paging " +
        'on createdAt desc, id desc). Use it to walk a whole list or past the first pages; `page` to jump to a page ' +
        'number. Not together with `page`.',
    }),
  ),
};

/** `page`/`pageSize` of a short list with no cursor (an endpoint's deliveries): OFFSET paging is enough there. */
export const OffsetPageQueryFields = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  pageSize: PageQueryFields.pageSize,
};

/** A page of a short list with no cursor: `{items, page, pageSize, total}`. */
export function OffsetPageOf<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    pageSize: Type.Integer(),
    total: Type.Integer(),
  });
}

/** A page of a list: `{items, page, pageSize, total, nextCursor}`. */
export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Nullable(Type.Integer({ description: 'null when the page was asked by `cursor`' })),
    pageSize: Type.Integer(),
    total: Type.Integer({ description: "The list's rows under the given filters, exact" }),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' }),
    ),
  });
}
