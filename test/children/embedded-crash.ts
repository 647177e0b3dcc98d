/**
 * A crash child of `src/adapters/chain/embedded.test.ts` (a process it kills, not a test): starts the embedded
 * network on `argv[2]` and sends transactions forever, printing `sent <n>` after each one, until the test kills it
 * with SIGKILL.
 */
import { parseEther } from 'viem';
import { createEmbeddedNetwork } from '../../src/adapters/chain/embedded.ts';
import { sendTransactionOrThrow } from '../../src/adapters/chain/tx.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: embedded-crash.ts <dataDir>');
const network = await createEmbeddedNetwork({ dataDir });
process.stdout.write('ready\n');
const target = '0x00000000000000000000000000000000000000aa';
for (let n = 1; ; n++) {
  await sendTransactionOrThrow(network, {
    privateKey: network.operator.privateKey,
    to: target,
    value: parseEther('0.001'),
  });
  process.stdout.write(`sent ${n}\n`);
}
