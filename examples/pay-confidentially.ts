/**
 * Pay someone confidentially: fund a wallet (sandbox faucet), wrap public STABLE into confidential cSTABLE, and send
 * an encrypted amount to an address; then wait for the transfer to confirm.
 *
 *   npm start                       # in another shell
 *   node examples/pay-confidentially.ts [recipient-address]
 */
import { connect, expectConfirmed, fundedWallet } from './connect.ts';

const client = await connect('payer');
const wallet = await fundedWallet(client, '25');
// Anyone's address; by default a second wallet of ours, so the example needs nobody else.
const to = process.argv[2] ?? (await client.wallets.create({ type: 'CUSTODIAL', label: 'payee' })).address;

// An Idempotency-Key is generated and kept across retries: a dropped connection cannot pay twice.
const queued = await client.transfer({ walletId: wallet.id, to, amount: '12.50' });
console.log(`transfer ${queued.id} ${queued.status}`);
const transfer = await expectConfirmed(client, queued.id);
console.log(`transfer ${transfer.id} ${transfer.status}: 12.50 cSTABLE to ${to}, tx ${transfer.txHash}`);

const [balance] = await client.wallets.balances(wallet.id);
console.log(`confidential balance of ${wallet.address}: ${balance?.confidential.amount} cSTABLE`);
