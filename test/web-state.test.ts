/**
 * The web app keeps what a page remembers in one `const state = {…}` object per page or shared module
 * (docs/CONVENTIONS.md, "The web app calls the API through the client"): no module-level `let` in `web/src`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WEB_SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'src');

/** The module-level `let`s of one file's text, as `line: text` (a `let` inside a function is indented). */
function moduleLets(text: string): string[] {
  return text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => /^(export\s+)?let\s/.test(line))
    .map(({ line, number }) => `${number}: ${line}`);
}

describe('web app state', () => {
  it('finds a module-level let, and none inside a function', () => {
    expect(moduleLets("let code = '';\nfunction f() {\n  let x = 1;\n}\nexport let y = 2;\n")).toEqual([
      "1: let code = '';",
      '5: export let y = 2;',
    ]);
  });

  it('has no module-level let in web/src', () => {
    const files = readdirSync(WEB_SRC, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
    );
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((file) =>
      moduleLets(readFileSync(path.join(WEB_SRC, file), 'utf8')).map((hit) => `${file}:${hit}`),
    );
    expect(found).toEqual([]);
  });
});
