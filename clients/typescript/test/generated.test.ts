/**
 * The committed types are what the generator makes of the live document: a route changed without
 * `npm run client:generate` fails here, so the client cannot drift from the server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_TYPES, generateClientTypes } from '../../../scripts/client-generate.ts';

describe('the generated client types', () => {
  it('match the OpenAPI document the service serves (run `npm run client:generate` after changing a route)', async () => {
    const generated = await generateClientTypes();
    expect(generated).toContain('operations["createTransfer"]');
    expect(readFileSync(GENERATED_TYPES, 'utf8') === generated).toBe(true);
  });

  it('are used by a client that imports nothing but openapi-fetch and its own files (browsers and Node alike)', () => {
    const sources = path.dirname(GENERATED_TYPES);
    const imported = readdirSync(sources).flatMap((file) =>
      [
        ...readFileSync(path.join(sources, file), 'utf8').matchAll(
          /^(?:import|export)\b[^;]*?from '([^']+)'/gms,
        ),
      ].map((match) => match[1]),
    );
    expect(imported.length).toBeGreaterThan(3);
    expect(
      imported.filter((specifier) => specifier !== 'openapi-fetch' && !specifier?.startsWith('./')),
    ).toEqual([]);
  });
});
