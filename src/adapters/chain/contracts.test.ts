/**
 * Contract tests against the real embedded network (EDR + fhEVM mock): token operations, the silent zero, and the
 * letter vault's escrow / release / refund rules.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Abi,
  BaseError,
  ContractFunctionRevertedError,
  type Hex,
  parseEther,
  toEventSignature,
  toFunctionSignature,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, newWallet, redeem, type Wallet } from '../../../test/support/chain-fixtures.ts';
import {
  decryptConfidentialBalance,
  encodeConfidentialTransfer,
  encodeLetterEscrow,
  encodeLetterRefund,
  encodeLetterRelease,
  getStablecoinBalance,
  letterIdToBytes32,
  readLetter,
  verifyConfidentialTransfer,
  verifyLetterLeg,
} from '../confidential/helpers.ts';
import {
  CONTRACT_NAMES,
  confidentialTokenAbi,
  LETTER_STATE,
  letterVaultAbi,
  loadArtifact,
  stablecoinAbi,
} from './contracts.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork } from './embedded.ts';
import { sendTransaction, sendTransactionOrThrow } from './tx.ts';

let dataDir: string;
let network: EmbeddedNetwork;

/** Gas, and `confidential` units of cSTABLE (minted, wrapped) for a fresh wallet. */
async function fundedWallet(confidential: bigint): Promise<Wallet> {
  const wallet = newWallet();
  if (confidential > 0n) await fund(network, wallet, confidential);
  else {
    await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: wallet.address,
      value: parseEther('1'),
    });
  }
  return wallet;
}

async function escrow(sender: Wallet, letterId: Hex, amount: bigint) {
  const { confidentialToken, letterVault } = network.contracts;
  const encrypted = await network.rail.encryptAmount({
    contract: confidentialToken,
    caller: sender.address,
    amount,
  });
  return sendTransaction(network, {
    privateKey: sender.privateKey,
    to: confidentialToken,
    data: encodeLetterEscrow({ vault: letterVault, letterId, encrypted }),
  });
}

function revertName(error: unknown): string | undefined {
  if (error instanceof BaseError) {
    const revert = error.walk((e) => e instanceof ContractFunctionRevertedError);
    if (revert instanceof ContractFunctionRevertedError) return revert.data?.errorName;
  }
  return undefined;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-contracts-'));
  network = await createEmbeddedNetwork({ dataDir });
});

afterAll(async () => {
  await network?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('compiled contracts', () => {
  it('the typed ABIs only name functions, events and errors the compiled contracts have', () => {
    const pairs: [Abi, (typeof CONTRACT_NAMES)[keyof typeof CONTRACT_NAMES]][] = [
      [stablecoinAbi as unknown as Abi, CONTRACT_NAMES.stablecoin],
      [confidentialTokenAbi as unknown as Abi, CONTRACT_NAMES.confidentialToken],
      [letterVaultAbi as unknown as Abi, CONTRACT_NAMES.letterVault],
    ];
    const signature = (item: Abi[number]) => {
      if (item.type === 'function') return toFunctionSignature(item);
      if (item.type === 'event') return toEventSignature(item);
      if (item.type === 'error') return `error ${item.name}(${item.inputs.map((i) => i.type).join(',')})`;
      return item.type;
    };
    for (const [typed, name] of pairs) {
      const compiled = new Set(loadArtifact(name).abi.map(signature));
      for (const item of typed) expect(compiled, `${name}: ${signature(item)}`).toContain(signature(item));
    }
  });

  it('deploys the stablecoin with 6 decimals and the operator as owner, and cSTABLE over it', async () => {
    const { stablecoin, confidentialToken, letterVault } = network.contracts;
    const client = network.publicClient;
    expect(
      await client.readContract({ address: stablecoin, abi: stablecoinAbi, functionName: 'decimals' }),
    ).toBe(6);
    expect(
      await client.readContract({ address: stablecoin, abi: stablecoinAbi, functionName: 'symbol' }),
    ).toBe('STABLE');
    expect(
      await client.readContract({ address: stablecoin, abi: stablecoinAbi, functionName: 'owner' }),
    ).toBe(network.operator.address);
    expect(
      await client.readContract({
        address: confidentialToken,
        abi: confidentialTokenAbi,
        functionName: 'symbol',
      }),
    ).toBe('cSTABLE');
    expect(
      await client.readContract({
        address: confidentialToken,
        abi: confidentialTokenAbi,
        functionName: 'underlying',
      }),
    ).toBe(stablecoin);
    expect(
      await client.readContract({ address: letterVault, abi: letterVaultAbi, functionName: 'owner' }),
    ).toBe(network.operator.address);
  });

  it('only the operator mints the stablecoin', async () => {
    const stranger = await fundedWallet(0n);
    await expect(
      network.publicClient.simulateContract({
        account: stranger.address,
        address: network.contracts.stablecoin,
        abi: stablecoinAbi,
        functionName: 'mint',
        args: [stranger.address, 1n],
      }),
    ).rejects.toSatisfy((e) => revertName(e) === 'OwnableUnauthorizedAccount');
  });
});

describe('cSTABLE', () => {
  it('wraps, transfers an exact amount, and detects a transfer larger than the balance (silent zero)', async () => {
    const alice = await fundedWallet(1_000_000n);
    const bob = newWallet();
    const token = network.contracts.confidentialToken;
    expect(await decryptConfidentialBalance(network, alice.privateKey)).toBe(1_000_000n);

    const send = async (amount: bigint) => {
      const encrypted = await network.rail.encryptAmount({ contract: token, caller: alice.address, amount });
      return sendTransactionOrThrow(network, {
        privateKey: alice.privateKey,
        to: token,
        data: encodeConfidentialTransfer(bob.address, encrypted),
      });
    };

    const exact = await send(250_000n);
    const ok = await verifyConfidentialTransfer({
      network,
      receipt: exact,
      from: alice.address,
      to: bob.address,
      expectedAmount: 250_000n,
      decryptAs: alice.privateKey,
    });
    expect(ok).toMatchObject({ transferred: 250_000n, ok: true });

    // 750_000 left: asking for 900_000 mines fine and moves an encrypted zero.
    const tooMuch = await send(900_000n);
    expect(tooMuch.status).toBe('success');
    const silent = await verifyConfidentialTransfer({
      network,
      receipt: tooMuch,
      from: alice.address,
      to: bob.address,
      expectedAmount: 900_000n,
      decryptAs: bob.privateKey,
    });
    expect(silent.handle).not.toBeNull();
    expect(silent).toMatchObject({ transferred: 0n, ok: false });
    expect(await decryptConfidentialBalance(network, alice.privateKey)).toBe(750_000n);
    expect(await decryptConfidentialBalance(network, bob.privateKey)).toBe(250_000n);
  });

  it('redeems: unwrap, public decryption, finalizeUnwrap', async () => {
    const alice = await fundedWallet(500_000n);
    const before = await getStablecoinBalance(network, alice.address);
    const { request, decryption } = await redeem(network, alice, 200_000n);
    expect(request.receiver).toBe(alice.address);
    expect(decryption.cleartexts).toEqual([200_000n]);
    expect(await getStablecoinBalance(network, alice.address)).toBe(before + 200_000n);
    expect(await decryptConfidentialBalance(network, alice.privateKey)).toBe(300_000n);
  });
});

describe('LetterVault', () => {
  it('escrows a letter then releases exactly its amount to the claimant', async () => {
    const sender = await fundedWallet(100_000n);
    const claimant = newWallet();
    const letterId = letterIdToBytes32('letter-release');
    const escrowReceipt = await escrow(sender, letterId, 40_000n);
    const escrowed = await verifyLetterLeg({
      network,
      receipt: escrowReceipt,
      letterId,
      leg: 'escrow',
      expectedAmount: 40_000n,
    });
    expect(escrowed).toMatchObject({ amount: 40_000n, ok: true, party: sender.address });
    const record = await readLetter(network, letterId);
    expect(record).toMatchObject({
      sender: sender.address,
      state: LETTER_STATE.Escrowed,
      amount: escrowed.handle,
    });
    expect(await decryptConfidentialBalance(network, sender.privateKey)).toBe(60_000n);

    const release = await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: network.contracts.letterVault,
      data: encodeLetterRelease(letterId, claimant.address),
    });
    const released = await verifyLetterLeg({
      network,
      receipt: release,
      letterId,
      leg: 'release',
      expectedAmount: 40_000n,
    });
    expect(released).toMatchObject({ amount: 40_000n, ok: true, party: claimant.address });
    expect(await decryptConfidentialBalance(network, claimant.privateKey)).toBe(40_000n);
    expect((await readLetter(network, letterId)).state).toBe(LETTER_STATE.Released);
  });

  it('refuses a second release (and a refund after the release)', async () => {
    const sender = await fundedWallet(10_000n);
    const claimant = newWallet();
    const letterId = letterIdToBytes32('letter-twice');
    expect((await escrow(sender, letterId, 10_000n)).status).toBe('success');
    const vault = network.contracts.letterVault;
    const op = network.operator.privateKey;
    await sendTransactionOrThrow(network, {
      privateKey: op,
      to: vault,
      data: encodeLetterRelease(letterId, claimant.address),
    });

    await expect(
      network.publicClient.simulateContract({
        account: network.operator.address,
        address: vault,
        abi: letterVaultAbi,
        functionName: 'release',
        args: [letterId, claimant.address],
      }),
    ).rejects.toSatisfy((e) => revertName(e) === 'LetterNotEscrowed');
    // Mined anyway (explicit gas): the transaction reverts and nothing moves.
    const second = await sendTransaction(network, {
      privateKey: op,
      to: vault,
      data: encodeLetterRelease(letterId, claimant.address),
      gas: 1_000_000n,
    });
    expect(second.status).toBe('reverted');
    const refund = await sendTransaction(network, {
      privateKey: op,
      to: vault,
      data: encodeLetterRefund(letterId),
      gas: 1_000_000n,
    });
    expect(refund.status).toBe('reverted');
    expect(await decryptConfidentialBalance(network, claimant.privateKey)).toBe(10_000n);
  });

  it('records an encrypted zero when the sender cannot cover the letter, and releases zero', async () => {
    const sender = await fundedWallet(5_000n);
    const claimant = newWallet();
    const letterId = letterIdToBytes32('letter-zero');
    const escrowReceipt = await escrow(sender, letterId, 9_000n);
    expect(escrowReceipt.status).toBe('success');
    const escrowed = await verifyLetterLeg({
      network,
      receipt: escrowReceipt,
      letterId,
      leg: 'escrow',
      expectedAmount: 9_000n,
    });
    expect(escrowed).toMatchObject({ amount: 0n, ok: false });
    expect(await decryptConfidentialBalance(network, sender.privateKey)).toBe(5_000n);

    const release = await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: network.contracts.letterVault,
      data: encodeLetterRelease(letterId, claimant.address),
    });
    const released = await verifyLetterLeg({ network, receipt: release, letterId, leg: 'release' });
    expect(released).toMatchObject({ amount: 0n, ok: false });
    expect(await decryptConfidentialBalance(network, claimant.privateKey)).toBe(0n);
  });

  it('refunds a letter to its sender', async () => {
    const sender = await fundedWallet(30_000n);
    const letterId = letterIdToBytes32('letter-refund');
    await escrow(sender, letterId, 30_000n);
    expect(await decryptConfidentialBalance(network, sender.privateKey)).toBe(0n);
    const refund = await sendTransactionOrThrow(network, {
      privateKey: network.operator.privateKey,
      to: network.contracts.letterVault,
      data: encodeLetterRefund(letterId),
    });
    const refunded = await verifyLetterLeg({
      network,
      receipt: refund,
      letterId,
      leg: 'refund',
      expectedAmount: 30_000n,
    });
    expect(refunded).toMatchObject({ amount: 30_000n, ok: true, party: sender.address });
    expect(await decryptConfidentialBalance(network, sender.privateKey)).toBe(30_000n);
    expect((await readLetter(network, letterId)).state).toBe(LETTER_STATE.Refunded);
  });

  it('lets only the operator release or refund, and refuses a letter id already used', async () => {
    const sender = await fundedWallet(20_000n);
    const letterId = letterIdToBytes32('letter-guarded');
    expect((await escrow(sender, letterId, 10_000n)).status).toBe('success');
    const vault = network.contracts.letterVault;
    await expect(
      network.publicClient.simulateContract({
        account: sender.address,
        address: vault,
        abi: letterVaultAbi,
        functionName: 'release',
        args: [letterId, sender.address],
      }),
    ).rejects.toSatisfy((e) => revertName(e) === 'OwnableUnauthorizedAccount');
    const byStranger = await sendTransaction(network, {
      privateKey: sender.privateKey,
      to: vault,
      data: encodeLetterRefund(letterId),
      gas: 1_000_000n,
    });
    expect(byStranger.status).toBe('reverted');
    expect((await readLetter(network, letterId)).state).toBe(LETTER_STATE.Escrowed);

    const again = await sendTransaction(network, {
      privateKey: sender.privateKey,
      to: network.contracts.confidentialToken,
      data: encodeLetterEscrow({
        vault,
        letterId,
        encrypted: await network.rail.encryptAmount({
          contract: network.contracts.confidentialToken,
          caller: sender.address,
          amount: 10_000n,
        }),
      }),
      gas: 3_000_000n,
    });
    expect(again.status).toBe('reverted');
    expect(await decryptConfidentialBalance(network, sender.privateKey)).toBe(10_000n);
  });
});
