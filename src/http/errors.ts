import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseDbError } from '../db/errors.ts';
import { AppError, findAppError } from '../lib/errors.ts';
import { JSON_CONTENT_TYPE } from './envelope.ts';
import { recordErrorAnswer } from './error-record.ts';

interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  schemaPath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/recipient/address/city` → `recipient.address.city`; a missing property names itself. */
function issuePath(issue: ValidationIssue): string {
  const base = (issue.instancePath ?? '').split('/').filter(Boolean).join('.');
  const missing = issue.params?.missingProperty;
  if (typeof missing === 'string') return base ? `${base}.${missing}` : missing;
  const extra = issue.params?.additionalProperty;
  if (typeof extra === 'string') return base ? `${base}.${extra}` : extra;
  return base;
}

/**
 * A value outside a union of literals (TypeBox's `Type.Union` of `Type.Literal`s: an `anyOf` of `const`s) fails
 * every branch, and Ajv reports each (`must be equal to constant`, once per allowed value) and then the `anyOf`:
 * those become one issue that lists the allowed values. Any other union's issues are left as they are.
 */
function collapseLiteralUnions(issues: ValidationIssue[]): Array<{ path: string; message: string }> {
  const merged = new Set<ValidationIssue>();
  const replaced = new Map<ValidationIssue, string>();
  for (const union of issues) {
    if (union.keyword !== 'anyOf' || !union.schemaPath) continue;
    const branches = issues.filter(
      (issue) =>
        issue !== union &&
        issue.instancePath === union.instancePath &&
        issue.schemaPath?.startsWith(`${union.schemaPath}/`),
    );
    if (branches.length === 0 || !branches.every((issue) => issue.keyword === 'const')) continue;
    for (const branch of branches) merged.add(branch);
    const allowed = branches.map((issue) => JSON.stringify(issue.params?.allowedValue));
    replaced.set(union, `must be one of ${allowed.join(', ')}`);
  }
  return issues
    .filter((issue) => !merged.has(issue))
    .map((issue) => ({
      path: issuePath(issue),
      message: replaced.get(issue) ?? issue.message ?? 'is invalid',
    }));
}

function notFoundFor(request: FastifyRequest): AppError {
  const code = request.routeOptions.config?.notFound ?? 'not_found';
  return new AppError(code, code === 'letter_not_found' ? 'No such letter.' : 'Not found.');
}

function toAppError(error: FastifyError | AppError | Error, request: FastifyRequest): AppError {
  const carried = findAppError(error);
  if (carried) return carried;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[] };
  if (Array.isArray(fastifyError.validation)) {
    const where = fastifyError.validationContext ?? 'body';
    // A path id of the wrong shape names nothing the caller owns: it reads like another account's id.
    if (where === 'params') return notFoundFor(request);
    const details = collapseLiteralUnions(fastifyError.validation);
    return new AppError('validation_error', `The request ${where} is invalid.`, { details });
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(
        'unsupported_media_type',
        'Request bodies must be sent as Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
  }
  // The database refused a value as data (class 22: out of range, bad encoding, bad text representation): the
  // request carried it, so it is the request's fault, never a 500. Input checks should have caught it first.
  if (parseDbError(error)?.sqlState.startsWith('22')) {
    return new AppError('invalid_request', 'The request contains a value the service cannot accept.');
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 404) return new AppError('not_found', 'Not found.');
    if (status === 415) return new AppError('unsupported_media_type', 'Unsupported media type.');
    if (status === 429) return new AppError('rate_limited', 'Too many requests.');
    return new AppError('invalid_request', 'The request cannot be processed.', { status });
  }
  return new AppError(
    'internal_error',
    'Something went wrong on our side. It is safe to retry with backoff.',
    {
      cause: error,
    },
  );
}

function envelopeOf(error: AppError): {
  ok: false;
  error: { code: string; message: string; details?: unknown };
} {
  const body: { code: string; message: string; details?: unknown } = {
    code: error.code,
    message: error.message,
  };
  // A stated `retryable` goes in `details`, where the interface shows it (`receipt_unavailable`: `{status, retryable}`).
  const details = error.statesRetryable
    ? { ...(error.details as Record<string, unknown> | undefined), retryable: error.retryable }
    : error.details;
  if (details !== undefined) body.details = details;
  return { ok: false, error: body };
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  recordErrorAnswer(reply.request.routeOptions?.schema?.operationId, error.status, error.code);
  return reply.code(error.status).type(JSON_CONTENT_TYPE).send(envelopeOf(error));
}

/**
 * A path the router cannot even decode (`%ff`) or a parameter past the router's length limit: no route is matched
 * yet, so the path itself says whether it would have named a letter.
 */
export function frameworkErrorOf(request: FastifyRequest, letterPrefix: string): AppError {
  const path = request.raw.url?.split('?')[0] ?? '';
  return path.startsWith(letterPrefix)
    ? new AppError('letter_not_found', 'No such letter.')
    : new AppError('not_found', 'Not found.');
}

/** The envelope written straight to a socket, for what no Fastify reply exists for; the connection is then closed. */
function writeToSocket(socket: Socket, appError: AppError): void {
  if (socket.writable) {
    const body = JSON.stringify(envelopeOf(appError));
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        `Content-Type: ${JSON_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n' +
        body,
    );
  }
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request (malformed HTTP, oversized headers, a client too
 * slow to send its request): the envelope written straight to the socket, as the last layer that can answer. Not
 * when an answer to the request is already on its way (the parser can fail on what follows a request that was
 * answered): a second answer would corrupt the exchange, so the connection is only closed, as Node itself does.
 */
export function writeClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (!inFlight?.headersSent) {
    writeToSocket(
      socket,
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('request_headers_too_large', 'The request headers are too large.')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new AppError('request_timeout', 'The request was not received in time.')
          : new AppError('invalid_request', 'The request is not valid HTTP.'),
    );
  }
  socket.destroy(error);
}

/** `CONNECT` (a proxy's method) reaches no route: Node would drop the connection without a word. */
export function refuseConnect(request: { url?: string }, socket: Socket): void {
  writeToSocket(socket, new AppError('not_found', `No route CONNECT ${request.url ?? ''}.`));
  socket.destroy();
}

/** The one place errors become responses: the envelope, a stable code, and never an internal message. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error, request);
    // A limit (429) or the chain being unreachable (503) says when to come back.
    const retryAfter = (appError.details as { retryAfter?: unknown } | undefined)?.retryAfter;
    if ((appError.status === 429 || appError.status === 503) && typeof retryAfter === 'number')
      reply.header('Retry-After', retryAfter);
    if (appError.status >= 500 && appError.code === 'internal_error') {
      request.log.error({ err: error }, 'unhandled error');
    } else if (appError.status >= 500) {
      request.log.warn({ code: appError.code, err: appError.cause ?? undefined }, appError.message);
    }
    if (request.routeOptions.config?.flat) {
      return reply.code(appError.status).send({ ok: false, error: appError.message });
    }
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    return sendError(
      reply,
      new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
    );
  });
}
