/**
 * The dApp's tests, run by `npx hardhat test --network localhost` against `sealpay devnet` exactly as a template's
 * tests run against `hardhat node`: the plugin has already run its setup on the devnet's host contracts (the run
 * stops before the first test otherwise), the signers are the node's accounts, and every FHE step goes through the
 * plugin's `fhevm` API (encrypted inputs, user and public decryption through the devnet's relayer methods).
 */
import assert from 'node:assert/strict';
import { FhevmType } from '@fhevm/hardhat-plugin';
import type { HardhatEthersSigner } from '@nomicfoundation/hardhat-ethers/signers';
import type { Contract } from 'ethers';
import { ethers, fhevm } from 'hardhat';

const TEST_MNEMONIC = 'test test test test test test test test test test test junk';

describe('EncryptedCounter and CountReveal on sealpay devnet', () => {
  let alice: HardhatEthersSigner;
  let bob: HardhatEthersSigner;
  let counter: Contract;
  let counterAddress: string;
  let reveal: Contract;

  before(async () => {
    const signers = await ethers.getSigners();
    assert.equal(signers.length, 10);
    [, alice, bob] = signers as [HardhatEthersSigner, HardhatEthersSigner, HardhatEthersSigner];
    counter = (await ethers.deployContract('EncryptedCounter', [], alice)) as unknown as Contract;
    await counter.waitForDeployment();
    counterAddress = await counter.getAddress();
    reveal = (await ethers.deployContract('CountReveal', [counterAddress], alice)) as unknown as Contract;
    await reveal.waitForDeployment();
  });

  it("is a mock fhEVM node with the test mnemonic's accounts, as hardhat node with the plugin is", async () => {
    assert.equal(fhevm.isMock, true);
    const signers = await ethers.getSigners();
    for (const [index, signer] of signers.entries()) {
      const expected = ethers.HDNodeWallet.fromPhrase(TEST_MNEMONIC, '', `m/44'/60'/0'/0/${index}`).address;
      assert.equal(signer.address, expected);
      assert.ok((await ethers.provider.getBalance(signer.address)) > ethers.parseEther('9000'));
    }
  });

  it('runs the contracts on the host contracts the plugin set up and compiled them against', async () => {
    // The addresses the plugin compiled into the contracts (its ZamaConfig.sol) are those it found deployed.
    await fhevm.assertCoprocessorInitialized(counter, 'EncryptedCounter');
    await fhevm.assertCoprocessorInitialized(reveal, 'CountReveal');
    const metadata = await fhevm.getRelayerMetadata();
    const config = await fhevm.getCoprocessorConfig(counterAddress);
    assert.equal(metadata.chainId, 31337);
    assert.equal(metadata.ACLAddress, config.ACLAddress);
    assert.equal(metadata.CoprocessorAddress, config.CoprocessorAddress);
    assert.equal(metadata.KMSVerifierAddress, config.KMSVerifierAddress);
  });

  it('adds encrypted inputs and lets their senders decrypt the total, and no one else', async () => {
    for (const [signer, amount] of [
      [alice, 7],
      [bob, 5],
    ] as const) {
      const input = await fhevm.createEncryptedInput(counterAddress, signer.address).add32(amount).encrypt();
      const tx = await (counter.connect(signer) as Contract).getFunction('add')(
        input.handles[0],
        input.inputProof,
      );
      await tx.wait();
    }
    const handle = (await counter.getFunction('count')()) as string;
    assert.equal(await fhevm.userDecryptEuint(FhevmType.euint32, handle, counterAddress, bob), 12n);
    // Alice added before Bob: the ACL does not give her the handle Bob's addition made.
    await assert.rejects(fhevm.userDecryptEuint(FhevmType.euint32, handle, counterAddress, alice));
  });

  it('decrypts the published total publicly and CountReveal verifies the KMS proof on chain', async () => {
    const handle = (await counter.getFunction('count')()) as string;
    await assert.rejects(fhevm.publicDecryptEuint(FhevmType.euint32, handle));
    await (await counter.getFunction('publish')()).wait();
    assert.equal(await fhevm.publicDecryptEuint(FhevmType.euint32, handle), 12n);

    const decrypted = await fhevm.publicDecrypt([handle]);
    assert.equal(decrypted.clearValues[handle as `0x${string}`], 12n);
    const forged = ethers.AbiCoder.defaultAbiCoder().encode(['uint32'], [13]);
    await assert.rejects(
      reveal.getFunction('reveal').staticCall(forged, decrypted.decryptionProof),
      /InvalidKMSSignatures|reverted/,
    );
    await (
      await reveal.getFunction('reveal')(decrypted.abiEncodedClearValues, decrypted.decryptionProof)
    ).wait();
    assert.equal(await reveal.getFunction('isRevealed')(), true);
    assert.equal(await reveal.getFunction('revealed')(), 12n);
  });

  it('takes the chain back with evm_snapshot and evm_revert, and decrypts as the chain now is', async () => {
    const snapshot = (await ethers.provider.send('evm_snapshot', [])) as string;
    const input = await fhevm.createEncryptedInput(counterAddress, bob.address).add32(30).encrypt();
    await (
      await (counter.connect(bob) as Contract).getFunction('add')(input.handles[0], input.inputProof)
    ).wait();
    const added = (await counter.getFunction('count')()) as string;
    assert.equal(await fhevm.userDecryptEuint(FhevmType.euint32, added, counterAddress, bob), 42n);

    assert.equal(await ethers.provider.send('evm_revert', [snapshot]), true);
    const handle = (await counter.getFunction('count')()) as string;
    assert.notEqual(handle, added);
    assert.equal(await fhevm.userDecryptEuint(FhevmType.euint32, handle, counterAddress, bob), 12n);
    // The reverted addition's handle is gone with its block: the ACL no longer lets anyone decrypt it.
    await assert.rejects(fhevm.userDecryptEuint(FhevmType.euint32, added, counterAddress, bob));
  });
});
