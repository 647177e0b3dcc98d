/**
 * A crash child of `src/adapters/chain/snapshot.test.ts` (a process it kills, not a test): starts the embedded
 * network on `argv[2]` with a snapshot every `argv[3]` journal entries, funds the wallet of key `argv[4]` on first
 * start, and sends confidential transfers of 1 to `argv[5]` forever, printing
 * `acked <n> <transaction hash> <block number> <block hash>` for each receipt and `snapshot <entries>` when a new
 * snapshot is on disk, until the test kills it with SIGKILL.
 */
import type { Address, Hex } from 'viem';
import { createEmbeddedNetwork } from '../../src/adapters/chain/embedded.ts';
import { confidentialTransfer, fund, newWallet } from '../support/chain-fixtures.ts';

const [dataDir, every, key, to] = process.argv.slice(2);
if (!dataDir || !every || !key || !to) {
  throw new Error('usage: snapshot-crash.ts <dataDir> <snapshotEvery> <senderKey> <recipient>');
}
const network = await createEmbeddedNetwork({ dataDir, snapshotEvery: Number(every) });
const sender = newWallet(key as Hex);
if (network.startup.firstStart) await fund(network, sender, 1_000_000n);
process.stdout.write('ready\n');
let covered = network.snapshotEntries();
for (let n = 1; ; n++) {
  const receipt = await confidentialTransfer(network, sender, to as Address, 1n);
  process.stdout.write(`acked ${n} ${receipt.transactionHash} ${receipt.blockNumber} ${receipt.blockHash}\n`);
  if (network.snapshotEntries() !== covered) {
    covered = network.snapshotEntries();
    process.stdout.write(`snapshot ${covered}\n`);
  }
}
