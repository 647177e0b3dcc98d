/**
 * Builds the web app (`web/`) into `web/dist` with Vite. Called at the end of `scripts/build.ts`, so `npm start`
 * and `npm test` build it with no extra step.
 *
 * Incremental like the contract build: a stamp (sha-256 over the web sources, the build configuration and the
 * versions of Vite and of the packages bundled into the app) is kept in `web/dist/.stamp`; when it matches and both
 * HTML entries exist, the build is skipped.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

export const WEB_ROOT = path.dirname(fileURLToPath(import.meta.url));
export const WEB_DIST = path.join(WEB_ROOT, 'dist');
const STAMP = path.join(WEB_DIST, '.stamp');

/**
 * Inputs of the bundle: everything under web/ except the output, the browser tests and this file's siblings, and
 * the typed client the app calls the API through.
 */
const SOURCES = [
  'index.html',
  'claim.html',
  'favicon.svg',
  'vite.config.ts',
  'src',
  '../clients/typescript/src',
];
const BUNDLED_PACKAGES = ['vite', 'qrcode', 'openapi-fetch'];
export const WEB_ENTRIES = ['index.html', 'claim.html'] as const;

export interface WebBuildResult {
  built: boolean;
  durationMs: number;
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'absent';
  }
}

function listFiles(relative: string): string[] {
  const absolute = path.join(WEB_ROOT, relative);
  if (!existsSync(absolute)) return [];
  if (!statSync(absolute).isDirectory()) return [relative];
  return readdirSync(absolute)
    .sort()
    .flatMap((entry) => listFiles(path.join(relative, entry)));
}

/** The stamp of the current web sources; equal stamps mean an equal build. */
export function computeWebStamp(): string {
  const hash = createHash('sha256');
  for (const pkg of BUNDLED_PACKAGES) hash.update(`${pkg}@${packageVersion(pkg)}\n`);
  for (const file of SOURCES.flatMap(listFiles)) {
    hash.update(`${file.split(path.sep).join('/')}\n`);
    hash.update(readFileSync(path.join(WEB_ROOT, file)));
  }
  return hash.digest('hex');
}

export function isWebBuildFresh(): boolean {
  if (!existsSync(STAMP)) return false;
  if (readFileSync(STAMP, 'utf8').trim() !== computeWebStamp()) return false;
  return WEB_ENTRIES.every((entry) => existsSync(path.join(WEB_DIST, entry)));
}

/** Builds `web/dist` unless the stamp says it is current (`force` builds anyway). */
export async function buildWeb(
  options: { force?: boolean; log?: (line: string) => void } = {},
): Promise<WebBuildResult> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(`[build] ${line}`));
  if (!options.force && isWebBuildFresh()) {
    log(`web app up to date (${Math.round(performance.now() - started)} ms)`);
    return { built: false, durationMs: performance.now() - started };
  }
  const stamp = computeWebStamp();
  // Loaded only when a build is needed: importing this module stays cheap.
  const { build } = await import('vite');
  const { default: config } = await import('./vite.config.ts');
  await build({ ...config, configFile: false });
  writeFileSync(STAMP, `${stamp}\n`);
  const durationMs = performance.now() - started;
  log(`built the web app into web/dist in ${Math.round(durationMs)} ms`);
  return { built: true, durationMs };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildWeb({ force: process.argv.includes('--force') });
}
