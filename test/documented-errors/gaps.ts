/**
 * Documented codes against the codes the tests produced (issue 36 item 15). Each operation of the OpenAPI document
 * must document exactly the codes it can answer. The codes every route of its kind answers (its auth mode, budget
 * and input: `errorsOf` with nothing declared) are derived from the code that answers them for every route alike;
 * what a route declares itself (`config.errors`) must each have been answered by some test, or the document
 * promises what no path gives. The other direction (an answer the document does not name) is the fuzz and
 * authorization suites' (`problemsOf`), against a service as deployed: other tests build apps without a chain,
 * whose `503 service_unavailable` (`requireNetwork`) no serving process answers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { errorsOf } from '../../src/http/openapi.ts';
import type { ErrorCode } from '../../src/lib/errors.ts';
import { authOf } from '../hardening/openapi.ts';

/**
 * Test files whose answers do not count as producing a code: the fuzzer draws new requests every run (its seed
 * changes), so a code only it produced would be documented one run and a gap the next.
 */
const BY_CHANCE: ReadonlySet<string> = new Set(['fuzz.test.ts']);

/** The codes every route answers whatever it declares, and no test makes every route answer. */
const EVERY_ROUTE: ReadonlySet<ErrorCode> = new Set(['internal_error']);

interface DocumentOperation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses?: Record<string, { 'x-error-codes'?: string[] }>;
}

/** One error answer recorded by `src/http/error-record.ts`. */
export interface Recorded {
  operationId: string;
  status: number;
  code: string;
  source: string;
}

/** Every line the run's processes wrote to `dir`. */
export function readRecorded(dir: string): Recorded[] {
  const out: Recorded[] = [];
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const [operationId, status, code, source] = line.split(' ');
      if (operationId && status && code)
        out.push({ operationId, status: Number(status), code, source: source ?? '-' });
    }
  }
  return out;
}

/** `operationId status code`, the unit both directions compare. */
const key = (operationId: string, status: number | string, code: string) =>
  `${operationId} ${status} ${code}`;

/** What the document promises that no test produced, as sorted `operationId status code` lines. */
export function unproducedCodes(
  document: { paths: Record<string, Record<string, DocumentOperation>> },
  recorded: readonly Recorded[],
): string[] {
  const declared = new Set<string>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const operationId = operation.operationId;
      if (!operationId) continue;
      const codes = Object.entries(operation.responses ?? {}).flatMap(([status, response]) =>
        (response['x-error-codes'] ?? []).map((code) => [Number(status), code] as const),
      );
      const hasParams = path.includes('{');
      const generic = new Set(
        errorsOf({
          method: method.toUpperCase(),
          auth: authOf(operation.security),
          // Unknown from the document: a budget is assumed, which only widens what counts as derived.
          rate: undefined,
          notFound: codes.some(([, code]) => code === 'letter_not_found') ? 'letter_not_found' : undefined,
          hasParams,
          declared: [],
        }).map(([code, status]) => `${status} ${code}`),
      );
      for (const [status, code] of codes) {
        if (generic.has(`${status} ${code}`) || EVERY_ROUTE.has(code as ErrorCode)) continue;
        declared.add(key(operationId, status, code));
      }
    }
  }
  const produced = new Set(
    recorded
      .filter((entry) => !BY_CHANCE.has(basename(entry.source)))
      .map((entry) => key(entry.operationId, entry.status, entry.code)),
  );
  return [...declared].filter((entry) => !produced.has(entry)).sort();
}
