import { type TSchema, Type } from '@sinclair/typebox';
import { ID_PATTERN } from '../lib/ids.ts';

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
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A path id. Anything not shaped like one of our ids (NUL, bad encoding, too long) reads as not found. */
export const IdParam = Type.Object({ id: Type.String({ pattern: ID_PATTERN }) });

/**
 * `page` and `pageSize` of a paged list (the interface: default 1 and 20, at most 100 a page). Pages stop at
 * 1,000,000: past it a number is a mistake or an attack (`1e400` parses as Infinity), answered 400.
 */
export const PageQueryFields = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
};

/** A page of a list: `{items, page, pageSize, total}`. */
export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    pageSize: Type.Integer(),
    total: Type.Integer(),
  });
}
