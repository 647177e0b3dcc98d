import type { Logger } from './logger.ts';
import type { RateLimitReporter } from './rate-limit.ts';

/**
 * What a service may know of the request it serves, as plain values: the client's address (per-IP limits), where
 * the state of the budgets it checks is reported, and where it logs. Routes build it (`requestContext` in
 * src/http/request-context.ts); a test or an operator command passes its own.
 */
export interface RequestContext {
  readonly ip: string;
  readonly rateLimits: RateLimitReporter;
  readonly log: Logger;
}
