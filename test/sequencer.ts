/**
 * The order files start in. vitest's own starts the longest first when it has the durations of a run before (its
 * cache, `node_modules/.vite/vitest/`), and otherwise groups files by project name and starts larger files first:
 * on a fresh clone the `process` tier's minute-long files then started last and ran alone at the end. Without
 * durations this starts the tiers whose files are longest first (`process`, `chain`, `engine`, `api`, `unit`), larger
 * files first within each, so the two workers finish together.
 */
import { statSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import type { TIERS } from './tiers.ts';

const LONGEST_FIRST = ['process', 'chain', 'engine', 'api', 'unit'] satisfies (keyof typeof TIERS)[];

export default class TierSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    if (files.every((spec) => cache.getTestSpecificationResult(spec))) {
      return [...files].sort(
        (a, b) =>
          (cache.getTestSpecificationResult(b)?.duration ?? 0) -
          (cache.getTestSpecificationResult(a)?.duration ?? 0),
      );
    }
    const size = new Map(files.map((spec) => [spec.moduleId, statSync(spec.moduleId).size]));
    const rank = (spec: TestSpecification) => {
      const index = LONGEST_FIRST.indexOf(spec.project.name as (typeof LONGEST_FIRST)[number]);
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    return [...files].sort(
      (a, b) => rank(a) - rank(b) || (size.get(b.moduleId) ?? 0) - (size.get(a.moduleId) ?? 0),
    );
  }
}
