import { describe, expect, it } from 'vitest';
import { buildContracts, computeStamp, DEPLOYABLE_CONTRACTS, isBuildFresh } from '../../../scripts/build.ts';
import { CONTRACT_NAMES, loadArtifact } from './contracts.ts';

describe('contract build (scripts/build.ts)', () => {
  it('skips an up-to-date build and produces every deployable contract', () => {
    buildContracts();
    expect(isBuildFresh()).toBe(true);
    const again = buildContracts();
    expect(again.compiled).toBe(false);
    expect(again.durationMs).toBeLessThan(500);
    expect(computeStamp()).toMatch(/^[0-9a-f]{64}$/);
    expect([...DEPLOYABLE_CONTRACTS].sort()).toEqual(Object.values(CONTRACT_NAMES).sort());
    for (const name of Object.values(CONTRACT_NAMES)) {
      const artifact = loadArtifact(name);
      expect(artifact.bytecode.length).toBeGreaterThan(100);
      // Under the EIP-170 limit, so no unlimited-size flag is needed anywhere.
      expect((artifact.deployedBytecode.length - 2) / 2).toBeLessThan(24_576);
    }
  });
});
