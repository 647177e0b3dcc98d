/**
 * Send a letter of value and claim it: the sender escrows a sealed amount in a letter (which could be printed and
 * mailed); the recipient, another account, redeems the one-time claim code into a wallet of theirs.
 *
 *   npm start                       # in another shell
 *   node examples/send-and-claim-letter.ts
 */
import { connect, fundedWallet } from './connect.ts';

const sender = await connect('sender');
const from = await fundedWallet(sender, '10');
const letter = await sender.letters.create({
  walletId: from.id,
  amount: '7.25',
  memo: 'Happy birthday!',
  recipient: {
    name: 'Ada Lovelace',
    address: {
      line1: '12 St James Square',
      city: 'London',
      region: 'London',
      postal: 'SW1Y 4JH',
      country: 'GB',
    },
  },
});
console.log(`letter ${letter.id} ${letter.status}; claim code ${letter.claimCode}`);

// The recipient: a different account, with a wallet to receive into.
const recipient = await connect('recipient');
const into = await recipient.wallets.create({ type: 'CUSTODIAL', label: 'gifts' });
const preview = await recipient.letters.preview(letter.claimCode ?? '');
console.log(`preview: from ${preview.senderLabel}, claimable: ${preview.claimable}`);

// Blocks while the vault releases the amount; waits for the claim to be final.
const claimed = await recipient.claimLetter({ claimCode: letter.claimCode ?? '', walletId: into.id });
console.log(
  `letter ${claimed.letter.status}: ${claimed.letter.amount} cSTABLE ("${claimed.letter.memo}") into ${into.address}`,
);
if (claimed.letter.status !== 'CLAIMED') throw new Error(`the letter is ${claimed.letter.status}`);
