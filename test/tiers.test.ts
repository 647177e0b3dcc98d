import { globSync, readFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_TIERS, SUITE_FILES, TIERS, type Tier } from './tiers.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const files = SUITE_FILES.flatMap((pattern) => globSync(pattern, { cwd: ROOT })).sort();
const SELF = 'test/tiers.test.ts';
const tiersOf = (file: string) =>
  (Object.keys(TIERS) as Tier[]).filter((tier) => TIERS[tier].some((pattern) => matchesGlob(file, pattern)));
const source = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8');

describe('the test tiers', () => {
  it('put every test file of the suite in exactly one tier', () => {
    expect(files.length).toBeGreaterThan(90);
    const misplaced = files
      .map((file) => ({ file, tiers: tiersOf(file) }))
      .filter(({ tiers }) => tiers.length !== 1);
    expect(misplaced).toEqual([]);
  });

  it('name no pattern that matches nothing (a renamed file would leave its tier)', () => {
    const empty = Object.values(TIERS)
      .flat()
      .filter((pattern) => !files.some((file) => matchesGlob(file, pattern)));
    expect(empty).toEqual([]);
  });

  it('keep their promises: unit files open no database, chain and start no process; database tiers open one', () => {
    const opensTestDatabase = /createTestContext|openTestDatabase|holdersFixture/;
    const startsSomething =
      /createTestContext|openTestDatabase|openDatabase\(|createEmbeddedNetwork|PgliteThread|spawnService|startDevnet|anvilBinary/;
    const broken: string[] = [];
    for (const file of files.filter((each) => each !== SELF)) {
      const [tier] = tiersOf(file);
      const text = source(file);
      if (tier === 'unit' && startsSomething.test(text))
        broken.push(`${file}: a unit file starts a database or chain`);
      if (tier && DATABASE_TIERS.includes(tier) && !opensTestDatabase.test(text))
        broken.push(`${file}: in ${tier}, which the PostgreSQL pass runs, but opens no test database`);
      if (tier && !DATABASE_TIERS.includes(tier) && opensTestDatabase.test(text))
        broken.push(`${file}: opens the test database, but ${tier} does not run on PostgreSQL`);
    }
    expect(broken).toEqual([]);
  });
});
