import { describe, expect, it } from 'vitest';
import { buildContracts, computeStamp, DEPLOYABLE_CONTRACTS, isBuildFresh } from '../../../scripts/build.ts';
import { CONTRACT_NAMES, type ContractName, loadArtifact, TRANSFER_BATCHER_CONTRACT } from './contracts.ts';

describe('contract build (scripts/build.ts)', () => {
  it('skips an up-to-date build and produces every deployable contract', () => {
    buildContracts();
    expect(isBuildFresh()).toBe(true);
    const again = buildContracts();
    expect(again.compiled).toBe(false);
    expect(again.durationMs).toBeLessThan(500);
    expect(computeStamp()).toMatch(/^[0-9a-f]{64}$/);
    const deployed: ContractName[] = [...Object.values(CONTRACT_NAMES), TRANSFER_BATCHER_CONTRACT];
    expect([...DEPLOYABLE_CONTRACTS].sort()).toEqual(deployed.sort());
    for (const name of deployed) {
      const artifact = loadArtifact(name);
      expect(artifact.bytecode.length).toBeGreaterThan(100);
      // Under the EIP-170 limit, so no unlimited-size flag is needed anywhere.
      expect((artifact.deployedBytecode.length - 2) / 2).toBeLessThan(24_576);
    }
  });
});
