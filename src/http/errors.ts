import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';

interface ValidationIssue {
  instancePath?: string;
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

function toAppError(error: FastifyError | AppError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[] };
  if (Array.isArray(fastifyError.validation)) {
    const details = fastifyError.validation.map((issue) => ({
      path: issuePath(issue),
      message: issue.message ?? 'is invalid',
    }));
    const where = fastifyError.validationContext ?? 'body';
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

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  const body: { code: string; message: string; details?: unknown } = {
    code: error.code,
    message: error.message,
  };
  if (error.details !== undefined) body.details = error.details;
  return reply.code(error.status).type('application/json; charset=utf-8').send({ ok: false, error: body });
}

/** The one place errors become responses: the envelope, a stable code, and never an internal message. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
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
