/**
 * What services, the worker and adapters log through: pino's logger (Fastify's `request.log`, the worker's) fits
 * it, and so does a test's silent object.
 */
export interface Logger {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}
