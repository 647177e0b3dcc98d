import { type TSchema, Type } from '@sinclair/typebox';

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
export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
