/**
 * The OpenAPI document as the service serves it: every operation named (a stable, unique camelCase `operationId`,
 * which the typed client's method names come from) and documenting its error responses by code; valid for a
 * maintained validator, and clean under Redocly's recommended lint rules.
 */
import { validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../../test/harness.ts';
import { type ErrorCode, statusOf } from '../lib/errors.ts';
import { ERROR_CODES_EXTENSION } from './openapi.ts';

interface Response {
  description?: string;
  [ERROR_CODES_EXTENSION]?: string[];
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  operationId?: string;
  responses?: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
}

/** Statuses a code may have besides its own, where the interface names two (see test/hardening/openapi.ts). */
const OTHER_STATUSES: Record<string, number[]> = {
  invalid_totp_code: [401],
  passkey_verification_failed: [401],
  receipt_unavailable: [409],
};

/**
 * Redocly warnings that do not matter here: the document names the running service's own origin as its server
 * (localhost in tests), and the project has not chosen a licence to name.
 */
const ACCEPTED_LINT_WARNINGS = new Set(['no-server-example.com', 'info-license']);

let ctx: TestContext;
let text: string;
let document: Document;

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      ...operation,
    })),
  );

beforeAll(async () => {
  ctx = await createTestContext();
  const response = await ctx.app.inject({ url: '/api/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  text = response.body;
  document = JSON.parse(text) as Document;
});

afterAll(async () => {
  await ctx?.close();
});

describe('the OpenAPI document', () => {
  it('names every operation with a unique camelCase operationId', () => {
    const all = operations();
    expect(all.length).toBeGreaterThan(40);
    const unnamed = all.filter((operation) => !operation.operationId).map((operation) => operation.name);
    expect(unnamed).toEqual([]);
    const badlyNamed = all.filter((operation) => !/^[a-z][A-Za-z0-9]+$/.test(operation.operationId ?? ''));
    expect(badlyNamed.map((operation) => `${operation.name}: ${operation.operationId}`)).toEqual([]);
    const ids = all.map((operation) => operation.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('documents the error responses of every operation, each code at its status', () => {
    const problems: string[] = [];
    for (const operation of operations()) {
      const errors = Object.entries(operation.responses ?? {}).filter(([status]) => /^[45]/.test(status));
      if (!errors.some(([status]) => status.startsWith('4'))) problems.push(`${operation.name}: no 4xx`);
      if (!errors.some(([status]) => status.startsWith('5'))) problems.push(`${operation.name}: no 5xx`);
      for (const [status, response] of errors) {
        if (!response.content?.['application/json']?.schema) {
          problems.push(`${operation.name} ${status}: no JSON schema`);
        }
        if (operation.name.endsWith(' /sandbox')) continue; // the flat probes: `{ok: false, error: string}`
        const codes = response[ERROR_CODES_EXTENSION] ?? [];
        if (codes.length === 0) problems.push(`${operation.name} ${status}: no codes`);
        for (const code of codes) {
          const expected = [statusOf(code as ErrorCode), ...(OTHER_STATUSES[code] ?? [])];
          if (!expected.includes(Number(status))) problems.push(`${operation.name}: ${code} under ${status}`);
          if (!response.description?.includes(`\`${code}\``)) {
            problems.push(`${operation.name} ${status}: ${code} not in the description`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('documents what a money movement and a claim can answer', () => {
    const codesOf = (path: string, method: string) =>
      Object.values(document.paths[path]?.[method]?.responses ?? {}).flatMap(
        (response) => response[ERROR_CODES_EXTENSION] ?? [],
      );
    expect(codesOf('/transfer', 'post')).toEqual(
      expect.arrayContaining(['invalid_amount', 'invalid_recipient', 'idempotency_conflict', 'rate_limited']),
    );
    expect(codesOf('/transfer/letter/claim', 'post')).toEqual(
      expect.arrayContaining([
        'already_claimed',
        'letter_not_claimable',
        'letter_expired',
        'claim_unsettled',
      ]),
    );
    expect(codesOf('/keys', 'post')).toEqual(
      expect.arrayContaining(['session_required', 'key_limit_reached']),
    );
  });

  it('is valid for @readme/openapi-parser', async () => {
    const result = await validate(JSON.parse(text));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it("passes Redocly's recommended lint rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    const mattering = problems
      .filter((problem) => problem.severity === 'error' || !ACCEPTED_LINT_WARNINGS.has(problem.ruleId))
      .map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message}`);
    expect(mattering).toEqual([]);
  });
});
