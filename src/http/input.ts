import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';

/** Deeper than any body of the interface needs; far below what serializing the value back could overflow on. */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of a JSON text, counted without parsing (so a hostile body is refused before `JSON.parse`
 * builds it). Brackets inside strings do not count.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) depth--;
  }
  return deepest;
}

/**
 * Why a text cannot be stored or compared as text: PostgreSQL refuses NUL in text, and a lone surrogate is not
 * Unicode (it would be stored as U+FFFD, a different string from the one the client sent).
 */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (!value.isWellFormed()) return 'must be well-formed Unicode';
  return null;
}

/** The first string (key or value) in a parsed JSON value that cannot be text, with its path. */
function findBadText(value: unknown, path: string[]): { path: string; message: string } | null {
  if (typeof value === 'string') {
    const message = textProblem(value);
    return message ? { path: path.join('.'), message } : null;
  }
  if (value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, item] of entries) {
    const name = String(key);
    const keyMessage = typeof key === 'string' ? textProblem(key) : null;
    if (keyMessage) return { path: [...path, name].join('.'), message: `property name ${keyMessage}` };
    const found = findBadText(item, [...path, name]);
    if (found) return found;
  }
  return null;
}

/**
 * JSON is the only body type: every other content type is `415 unsupported_media_type`. An empty body is
 * accepted (POST routes without a body); anything unparseable, or nested deeper than `MAX_JSON_DEPTH`, is
 * `400 invalid_json`; a string with NUL or a lone surrogate is `400 validation_error` naming its path.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'string', bodyLimit: 1024 * 1024 },
    (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      if (jsonDepth(text) > MAX_JSON_DEPTH) {
        return done(
          new AppError('invalid_json', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`),
          undefined,
        );
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(new AppError('invalid_json', 'The request body is not valid JSON.'), undefined);
      }
      const bad = request.routeOptions.config?.anyJson ? null : findBadText(parsed, []);
      if (bad) {
        return done(
          new AppError('validation_error', 'The request body is invalid.', {
            details: [{ path: bad.path, message: bad.message }],
          }),
          undefined,
        );
      }
      done(null, parsed);
    },
  );
}

/**
 * On arrival: an HTTP/1.1 request without Host is `400 invalid_request`. Before validation: a route whose body is
 * optional gets `{}` for no body at all; query strings are text too, so a value with NUL or a lone surrogate is
 * `400 validation_error` before any route (or the database) sees it. After validation: no query number is infinite. Path parameters are checked by their schema (`IdParam`), where a
 * malformed id reads as not found.
 */
export function installInputChecks(app: FastifyInstance): void {
  // HTTP/1.1 requires a Host header (RFC 9112 §3.2: answer 400 without one); Node's own refusal has no body.
  // These hooks wait for nothing, so they take Fastify's `done` instead of returning a promise: each request then
  // runs them without a promise and a microtask apiece. A throw is still answered (Fastify catches it).
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      throw new AppError('invalid_request', 'An HTTP/1.1 request needs a Host header.');
    }
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.routeOptions.config?.optionalBody) request.body = {};
    const query = request.query;
    const bad = query !== null && typeof query === 'object' ? findBadText(query, ['querystring']) : undefined;
    if (bad) {
      throw new AppError('validation_error', 'The request querystring is invalid.', {
        details: [{ path: bad.path, message: bad.message }],
      });
    }
    done();
  });
  // Ajv coerces a numeral too large for a double (`1e400`, `99…9` past 1e308) to Infinity, which then passes as an
  // integer and skips `maximum` (Ajv checks limits on finite numbers only): refuse it after validation instead.
  app.addHook('preHandler', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | null;
    for (const [name, value] of query !== null && typeof query === 'object' ? Object.entries(query) : []) {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        throw new AppError('validation_error', 'The request querystring is invalid.', {
          details: [{ path: `querystring.${name}`, message: 'must be a finite number within range' }],
        });
      }
    }
    done();
  });
}
