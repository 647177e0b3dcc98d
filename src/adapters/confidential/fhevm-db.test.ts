/**
 * The mock coprocessor's handle database after the chain goes back (evm_revert, anvil_rollback, anvil_reorg): the
 * handles of the blocks that are gone are forgotten, those of the blocks that stay (and the relayer's inputs) are
 * kept, including one computed again in a later block; and its events are read again from the block after.
 */
import { describe, expect, it } from 'vitest';
import { SnapshotFhevmDB } from './fhevm-db.ts';

const handle = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const at = (blockNumber: number) => ({ blockNumber, index: 0, transactionHash: `0x${'ab'.repeat(32)}` });
const INPUT = { blockNumber: 0, index: 0, transactionHash: `0x${'00'.repeat(32)}` };

describe('SnapshotFhevmDB.rewind', () => {
  it('forgets the handles of the blocks after the one the chain went back to, and reads from the block after it', async () => {
    const db = new SnapshotFhevmDB({ fromBlockNumber: 21, randomCounter: 0, handles: [] });
    await db.insertHandleBytes32(handle(1), '0x01', INPUT);
    await db.insertHandleBytes32(handle(2), 2n, at(10));
    await db.insertHandleBytes32(handle(3), 3n, at(15));
    await db.insertHandleBytes32(handle(4), 4n, at(20));
    // Computed again after the reorganized block: it stays known from block 10.
    await db.insertHandleBytes32(handle(2), 2n, at(18));
    db.rewind(14);
    expect(await db.tryQueryHandleBytes32(handle(1))).toMatchObject({ clearTextHex: '0x01' });
    expect(await db.tryQueryHandleBytes32(handle(2))).toMatchObject({
      clearTextHex: '2',
      metadata: { blockNumber: 10 },
    });
    expect(await db.tryQueryHandleBytes32(handle(3))).toBeUndefined();
    expect(await db.tryQueryHandleBytes32(handle(4))).toBeUndefined();
    expect(db.countHandles).toBe(2);
    expect(db.fromBlockNumber).toBe(15);
    // A rewind to a block not read yet changes no position forward.
    db.rewind(40);
    expect(db.fromBlockNumber).toBe(15);
    expect(db.save(15).handles).toHaveLength(2);
  });

  it('takes a random value again when told to replace it', async () => {
    const db = new SnapshotFhevmDB();
    await db.insertHandleBytes32(handle(5), 5n, at(3));
    await db.insertHandleBytes32(handle(5), 6n, at(4), { replace: true });
    expect(await db.queryHandleBytes32(handle(5))).toMatchObject({
      clearTextHex: '6',
      metadata: { blockNumber: 4 },
    });
  });
});
