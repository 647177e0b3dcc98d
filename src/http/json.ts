import type { FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.ts';

/**
 * JSON is the only body type: every other content type is `415 unsupported_media_type`. An empty body is
 * accepted (POST routes without a body); anything unparseable is `400 invalid_json`.
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'string', bodyLimit: 1024 * 1024 },
    (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new AppError('invalid_json', 'The request body is not valid JSON.'), undefined);
      }
    },
  );
}
