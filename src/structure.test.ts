/**
 * The import structure of `src/`, checked on every run (docs/CONVENTIONS.md, "where things go"): every file sits
 * in a layer, imports only from its own layer or the ones below, and no files import each other in a circle.
 * `src/` holds what the service runs: every file is reached from `main.ts`, and none imports or starts anything
 * under `test/` (test helpers and crash children live there). Test files are left out: they may reach anywhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.dirname(fileURLToPath(import.meta.url));

/** Highest first. A file belongs to the first layer whose pattern matches its path under `src/`. */
const LAYERS: { name: string; match: RegExp }[] = [
  { name: 'composition root', match: /^(main|runtime|operations|app|control)\.ts$/ },
  { name: 'modules', match: /^modules\// },
  { name: 'http and worker', match: /^(http|worker)\// },
  { name: 'deps', match: /^deps\.ts$/ },
  { name: 'config', match: /^config\.ts$/ },
  { name: 'adapters', match: /^adapters\// },
  { name: 'db', match: /^db\// },
  { name: 'lib', match: /^lib\// },
];

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) => layer.match.test(file));
  if (index < 0) throw new Error(`${file} is in no layer: add it to LAYERS`);
  return index;
}

function isTest(file: string): boolean {
  return /\.test\.ts$/.test(file);
}

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [path.relative(SRC, full)] : [];
  });
}

/** The project files a source file imports (static, re-exports and dynamic imports; type-only ones too). */
function importsOf(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
    ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.normalize(path.join(path.dirname(file), specifier)));
}

/**
 * The files a source file starts as a worker thread or a child process: `new URL('./x.ts', import.meta.url)`
 * (`pglite-thread.worker.ts`, `anvil-guard.ts`).
 */
function startedBy(file: string, text: string): string[] {
  return [...text.matchAll(/\bnew URL\(\s*'(\.[^']+)',\s*import\.meta\.url\s*\)/g)].map((match) =>
    path.normalize(path.join(path.dirname(file), match[1] as string)),
  );
}

/** The files reached from `entry` through the edges of `graph`, `entry` included. */
function reachedFrom(entry: string, graph: ReadonlyMap<string, readonly string[]>): Set<string> {
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const target of graph.get(file) ?? []) visit(target);
  };
  visit(entry);
  return reached;
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles().filter((file) => !isTest(file))) {
    const inside = importsOf(file, readFileSync(path.join(SRC, file), 'utf8')).filter(
      (target) => !target.startsWith('..'),
    );
    graph.set(file, inside);
  }
  return graph;
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

/**
 * The folder a file belongs to: its module's folder (`modules/letters`) or its top-level folder (`worker`, `db`);
 * a file at the root is its own.
 */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1]}`;
  return parts.length > 1 ? (parts[0] as string) : file;
}

/** The imports between folders: one edge per pair of folders, whatever files carry it. */
function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    for (const target of targets)
      if (graph.has(target) && folderOf(target) !== from) edges.add(folderOf(target));
    folders.set(from, edges);
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges].sort()]));
}

describe('import structure of src/', () => {
  const graph = importGraph();
  /** Every file's imports and the files it starts, outside `src/` too (as `../test/…`). */
  const edges = new Map(
    sourceFiles()
      .filter((file) => !isTest(file))
      .map((file) => {
        const text = readFileSync(path.join(SRC, file), 'utf8');
        return [file, [...importsOf(file, text), ...startedBy(file, text)]] as const;
      }),
  );

  it('reads the imports it checks (a planted upward import and a planted circle are found)', () => {
    expect(
      importsOf('http/x.ts', "import type { A } from '../modules/a/a.ts';\nimport '../lib/b.ts';"),
    ).toEqual(['modules/a/a.ts', 'lib/b.ts']);
    expect(layerOf('modules/a/a.ts')).toBeLessThan(layerOf('http/x.ts'));
    const planted = new Map([
      ['lib/a.ts', ['lib/b.ts']],
      ['lib/b.ts', ['lib/a.ts']],
    ]);
    expect(cycles(planted)).toEqual([['lib/a.ts', 'lib/b.ts', 'lib/a.ts']]);
    expect(graph.size).toBeGreaterThan(50);
  });

  it('imports nothing from a higher layer', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => graph.has(target) && layerOf(target) < layerOf(file))
        .map(
          (target) =>
            `${file} (${LAYERS[layerOf(file)]?.name}) -> ${target} (${LAYERS[layerOf(target)]?.name})`,
        ),
    );
    expect(upward).toEqual([]);
  });

  it('has no import circle', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('has no import circle between folders or module folders (a planted one is found)', () => {
    const planted = new Map([
      ['modules/a/a.service.ts', ['modules/b/b.service.ts']],
      ['modules/b/b.service.ts', []],
      ['modules/b/b.routes.ts', ['modules/c/c.ts']],
      ['modules/c/c.ts', ['modules/a/a.schema.ts']],
      ['modules/a/a.schema.ts', []],
    ]);
    expect(cycles(planted)).toEqual([]);
    expect(cycles(folderGraph(planted))).toEqual([['modules/a', 'modules/b', 'modules/c', 'modules/a']]);
    expect(folderGraph(graph).size).toBeGreaterThan(15);
    expect(cycles(folderGraph(graph)).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('imports and starts nothing under test/ (a planted import and a planted child are found)', () => {
    const planted =
      "import { totpCode } from '../../../test/support/totp.ts';\nnew URL('../../test/children/x.ts', import.meta.url);";
    expect([...importsOf('modules/a/a.ts', planted), ...startedBy('adapters/b.ts', planted)]).toEqual([
      '../test/support/totp.ts',
      '../test/children/x.ts',
    ]);
    const intoTest = [...edges].flatMap(([file, targets]) =>
      targets.filter((target) => target.startsWith('../test/')).map((target) => `${file} -> ${target}`),
    );
    expect(intoTest).toEqual([]);
  });

  it('holds only what the service runs: every file is reached from main.ts (a planted stray file is found)', () => {
    const planted = new Map([
      ['main.ts', ['db/pool.ts']],
      ['db/pool.ts', ['db/pool.worker.ts']],
      ['db/pool.worker.ts', []],
      ['db/pool.fixtures.ts', ['db/pool.ts']],
    ]);
    expect([...planted.keys()].filter((file) => !reachedFrom('main.ts', planted).has(file))).toEqual([
      'db/pool.fixtures.ts',
    ]);
    expect(startedBy('db/pool.ts', "new Worker(new URL('./pool.worker.ts', import.meta.url))")).toEqual([
      'db/pool.worker.ts',
    ]);
    const reached = reachedFrom('main.ts', edges);
    expect(reached.size).toBeGreaterThan(50);
    expect([...edges.keys()].filter((file) => !reached.has(file))).toEqual([]);
  });
});
