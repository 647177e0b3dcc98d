/**
 * `@sealpay/client`: the sealpay API from TypeScript, typed by the service's own OpenAPI document.
 *
 * ```ts
 * const sealpay = createClient({ baseUrl: 'https://pay.example.com/api/v1', apiKey: process.env.SEALPAY_API_KEY });
 * const queued = await sealpay.transfer({ walletId, to, amount: '12.50' });
 * const done = await sealpay.waitForTransaction(queued.id);
 * ```
 */
export * from './client.ts';
export * from './errors.ts';
export type { components, operations, paths } from './openapi.ts';
export { isReplayable, type RetryOptions } from './retry.ts';
export * from './sandbox.ts';
