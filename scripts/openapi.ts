/**
 * The OpenAPI document of the service, built in-process (the app on a throwaway in-memory database, no chain): what
 * `GET /api/v1/openapi.json` serves, without starting a server. `npm run client:generate` turns it into the typed
 * client's `clients/typescript/src/openapi.ts`; run alone, this script prints it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/client.ts';
import { closeDeps, createDeps } from '../src/runtime.ts';

/** The document as the sandbox serves it (the sandbox has every route; production lacks `POST /fund`). */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sealpay-openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const database = await openDatabase({ databaseUrl: null, dataDir: null });
    const deps = await createDeps(config, { database, network: false });
    const app = await buildApp(deps, { logger: false });
    try {
      await app.ready();
      return app.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
      await closeDeps(deps);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  process.stdout.write(`${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);
}
