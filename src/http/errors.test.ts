/** The one place errors become responses: a stated `retryable` is shown in `details`, as the interface shows it. */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../lib/errors.ts';
import { installErrorHandling } from './errors.ts';

const app = Fastify();
beforeAll(async () => {
  installErrorHandling(app);
  app.get('/stated', async () => {
    throw new AppError('receipt_unavailable', 'Not yet.', {
      status: 409,
      details: { status: 'QUEUED' },
      retryable: true,
    });
  });
  app.get('/refused', async () => {
    throw new AppError('receipt_unavailable', 'Never.', { details: { status: 'FAILED' }, retryable: false });
  });
  app.get('/bare', async () => {
    throw new AppError('upstream_error', 'Failed.', { retryable: true });
  });
  app.get('/silent', async () => {
    throw new AppError('service_unavailable', 'Down.', { details: { reason: 'x' } });
  });
  await app.ready();
});
afterAll(() => app.close());

async function errorAt(url: string) {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, ...response.json().error };
}

describe('AppError.retryable', () => {
  it('is rendered as details.retryable when stated, after the other details', async () => {
    const stated = await app.inject({ method: 'GET', url: '/stated' });
    expect(stated.statusCode).toBe(409);
    expect(stated.body).toBe(
      '{"ok":false,"error":{"code":"receipt_unavailable","message":"Not yet.","details":{"status":"QUEUED","retryable":true}}}',
    );
    expect(await errorAt('/refused')).toMatchObject({
      status: 400,
      details: { status: 'FAILED', retryable: false },
    });
    expect(await errorAt('/bare')).toMatchObject({ status: 502, details: { retryable: true } });
  });

  it('is left out of the envelope when not stated, and follows the status on the error itself', async () => {
    expect(await errorAt('/silent')).toEqual({
      status: 503,
      code: 'service_unavailable',
      message: 'Down.',
      details: { reason: 'x' },
    });
    expect(new AppError('service_unavailable', 'Down.').retryable).toBe(true);
    expect(new AppError('rate_limited', 'Slow down.').retryable).toBe(true);
    expect(new AppError('invalid_amount', 'No.').retryable).toBe(false);
    expect(new AppError('upstream_error', 'Failed.').retryable).toBe(false);
  });
});
