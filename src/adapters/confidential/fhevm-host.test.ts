/**
 * The fhEVM host contracts as `@fhevm/hardhat-plugin` lays them out (`HARDHAT_PLUGIN_MOCK`), on the embedded network
 * of `npm start` (the devnet is the same network served over HTTP): what the plugin's setup checks on a chain it
 * finds set up, read back from the chain, and checked against the installed plugin's own constants. A data
 * directory made before keeps its own layout and keeps working.
 *
 * The plugin itself running against the devnet: test/compat/zama-dapp.compat.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Wallet } from 'ethers';
import { type Abi, type Address, decodeFunctionResult, encodeFunctionData, getAddress, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confidentialTransfer, fund, newWallet, redeem } from '../../../test/support/chain-fixtures.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork } from '../chain/embedded.ts';
import { handleJsonRpcBody } from '../chain/jsonrpc.ts';
import { CLIENT_VERSION } from '../chain/node-identity.ts';
import { HARDHAT_PLUGIN_MOCK, hostArtifact, LOCAL_FHEVM_CONFIG } from './fhevm-host.ts';
import { decryptConfidentialBalance, getStablecoinBalance } from './helpers.ts';

const require = createRequire(import.meta.url);

/** `internal/constants.ts` of the installed `@fhevm/hardhat-plugin` (a devDependency of test/zama-dapp). */
function pluginConstants() {
  const dir = path.dirname(require.resolve('@fhevm/hardhat-plugin/package.json'));
  return (require(path.join(dir, 'internal', 'constants.js')) as { default: Record<string, unknown> })
    .default as {
    PRIVATE_KEY_KMS_SIGNER: string;
    PRIVATE_KEY_COPROCESSOR_SIGNER: string;
    DECRYPTION_ADDRESS: string;
    INPUT_VERIFICATION_ADDRESS: string;
    KMS_THRESHOLD: number;
    INPUT_VERIFIER_THRESHOLD: number;
    FHEVM_HOST_CONTRACTS_PACKAGE: { version: string };
    ZAMA_FHE_RELAYER_SDK_PACKAGE: { sepolia: { KMSVerifierAddress: string; gatewayChainId: number } };
  };
}

async function read(network: EmbeddedNetwork, to: Address, abi: Abi, functionName: string) {
  const data = (await network.rpc({
    method: 'eth_call',
    params: [{ to, data: encodeFunctionData({ abi, functionName }) }, 'latest'],
  })) as Hex;
  return decodeFunctionResult({ abi, functionName, data });
}

async function code(network: EmbeddedNetwork, address: Address): Promise<Hex> {
  return (await network.rpc({ method: 'eth_getCode', params: [address, 'latest'] })) as Hex;
}

async function rpcBody(network: EmbeddedNetwork, method: string, params: unknown[] = []) {
  return handleJsonRpcBody(network.rpc, { jsonrpc: '2.0', id: 1, method, params });
}

describe('the host contracts as @fhevm/hardhat-plugin lays them out', () => {
  let dataDir: string;
  let network: EmbeddedNetwork;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-fhevm-host-'));
    network = await createEmbeddedNetwork({ dataDir });
  });
  afterAll(async () => {
    await network?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("are those of the installed plugin's constants", () => {
    const plugin = pluginConstants();
    expect(HARDHAT_PLUGIN_MOCK.signers).toEqual({
      kmsSignerKey: `0x${plugin.PRIVATE_KEY_KMS_SIGNER}`,
      coprocessorSignerKey: `0x${plugin.PRIVATE_KEY_COPROCESSOR_SIGNER}`,
    });
    expect(HARDHAT_PLUGIN_MOCK.kmsVerifierAddress).toBe(
      plugin.ZAMA_FHE_RELAYER_SDK_PACKAGE.sepolia.KMSVerifierAddress,
    );
    expect(HARDHAT_PLUGIN_MOCK.kmsThreshold).toBe(BigInt(plugin.KMS_THRESHOLD));
    expect(HARDHAT_PLUGIN_MOCK.inputVerifierThreshold).toBe(BigInt(plugin.INPUT_VERIFIER_THRESHOLD));
    const hostContracts = JSON.parse(
      readFileSync(require.resolve('@fhevm/host-contracts/package.json'), 'utf8'),
    ) as { version: string };
    expect(hostContracts.version).toBe(plugin.FHEVM_HOST_CONTRACTS_PACKAGE.version);
  });

  it("hold the host contracts' exact bytecode, the ACL owned by 0x…01, both KMSVerifiers set up alike", async () => {
    const plugin = pluginConstants();
    const acl = LOCAL_FHEVM_CONFIG.ACLAddress;
    const kmsVerifiers = [LOCAL_FHEVM_CONFIG.KMSVerifierAddress, HARDHAT_PLUGIN_MOCK.kmsVerifierAddress];
    // The plugin compares the code at each address with its artifact, byte for byte.
    expect(await code(network, LOCAL_FHEVM_CONFIG.CoprocessorAddress)).toBe(
      hostArtifact('FHEVMExecutor').deployedBytecode,
    );
    expect(await code(network, acl)).toBe(hostArtifact('ACL').deployedBytecode);
    for (const address of kmsVerifiers) {
      expect(await code(network, address)).toBe(hostArtifact('KMSVerifier').deployedBytecode);
    }
    const aclAbi = hostArtifact('ACL').abi;
    expect(await read(network, acl, aclAbi, 'owner')).toBe(HARDHAT_PLUGIN_MOCK.aclOwner);

    const kmsAbi = hostArtifact('KMSVerifier').abi;
    const kmsSigner = new Wallet(`0x${plugin.PRIVATE_KEY_KMS_SIGNER}`).address;
    for (const address of kmsVerifiers) {
      expect(await read(network, address, kmsAbi, 'getKmsSigners')).toEqual([kmsSigner]);
      expect(await read(network, address, kmsAbi, 'getThreshold')).toBe(BigInt(plugin.KMS_THRESHOLD));
      const [, name, , chainId, verifyingContract] = (await read(
        network,
        address,
        kmsAbi,
        'eip712Domain',
      )) as unknown[];
      expect({ name, chainId, verifyingContract }).toEqual({
        name: 'Decryption',
        chainId: BigInt(plugin.ZAMA_FHE_RELAYER_SDK_PACKAGE.sepolia.gatewayChainId),
        verifyingContract: getAddress(plugin.DECRYPTION_ADDRESS),
      });
    }

    const metadata = (await rpcBody(network, 'fhevm_relayer_metadata')) as {
      result: { InputVerifierAddress: Address; KMSVerifierAddress: Address };
    };
    // dApps are told of the verifier the plugin compiles into them.
    expect(metadata.result.KMSVerifierAddress).toBe(HARDHAT_PLUGIN_MOCK.kmsVerifierAddress);
    const inputVerifier = metadata.result.InputVerifierAddress;
    const inputAbi = hostArtifact('InputVerifier').abi;
    expect(await code(network, inputVerifier)).toBe(hostArtifact('InputVerifier').deployedBytecode);
    expect(await read(network, inputVerifier, inputAbi, 'getCoprocessorSigners')).toEqual([
      new Wallet(`0x${plugin.PRIVATE_KEY_COPROCESSOR_SIGNER}`).address,
    ]);
    const [, , , , inputVerification] = (await read(
      network,
      inputVerifier,
      inputAbi,
      'eip712Domain',
    )) as unknown[];
    expect(inputVerification).toBe(getAddress(plugin.INPUT_VERIFICATION_ADDRESS));
  });

  it('names itself as a Hardhat node, with no anvil_nodeInfo', async () => {
    expect(await rpcBody(network, 'web3_clientVersion')).toMatchObject({ result: CLIENT_VERSION });
    expect(CLIENT_VERSION.toLowerCase().startsWith('hardhatnetwork/')).toBe(true);
    // What the devnet answers (the public /rpc of npm start serves only eth_, net_, web3_ and the relayer's).
    const metadata = (await network.rpc({ method: 'hardhat_metadata' })) as {
      chainId: number;
      instanceId: string;
      latestBlockNumber: number;
    };
    expect(metadata).toMatchObject({ clientVersion: CLIENT_VERSION, chainId: 31337 });
    expect(metadata.instanceId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(metadata.latestBlockNumber).toBe(Number(await network.publicClient.getBlockNumber()));
    await expect(network.rpc({ method: 'anvil_nodeInfo' })).rejects.toMatchObject({ code: -32601 });
  });

  it("npm start's /rpc lists no accounts and signs for none", async () => {
    expect(await rpcBody(network, 'eth_accounts')).toMatchObject({ result: [] });
    const hardhatAccount0 = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
    expect(
      await rpcBody(network, 'eth_sendTransaction', [{ from: hardhatAccount0, to: hardhatAccount0 }]),
    ).toMatchObject({ error: { code: -32601 } });
    expect(await rpcBody(network, 'eth_getBalance', [hardhatAccount0, 'latest'])).toMatchObject({
      result: '0x0',
    });
  });
});

describe('a data directory made before that layout', () => {
  let dataDir: string;
  let network: EmbeddedNetwork;
  /** Its chain/ folder as it was after its first start (test/fixtures/chain-before-plugin-layout.json.gz). */
  const fixture = JSON.parse(
    gunzipSync(
      readFileSync(new URL('../../../test/fixtures/chain-before-plugin-layout.json.gz', import.meta.url)),
    ).toString('utf8'),
  ) as { stateJson: string; operatorKey: string; journal: string };
  const state = JSON.parse(fixture.stateJson) as {
    operatorAddress: Address;
    mockSigners: { kmsSignerKey: Hex };
    contracts: Record<string, Address>;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-fhevm-host-before-'));
    const chain = path.join(dataDir, 'chain');
    mkdirSync(chain, { mode: 0o700 });
    writeFileSync(path.join(chain, 'state.json'), fixture.stateJson, { mode: 0o600 });
    writeFileSync(path.join(chain, 'operator.key'), fixture.operatorKey, { mode: 0o600 });
    writeFileSync(path.join(chain, 'journal.jsonl'), fixture.journal, { mode: 0o600 });
    network = await createEmbeddedNetwork({ dataDir });
  });
  afterAll(async () => {
    await network?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps its owner, its signers and its one KMSVerifier, and tells dApps of that one', async () => {
    expect(network.startup.firstStart).toBe(false);
    expect(network.contracts).toEqual(state.contracts);
    const aclAbi = hostArtifact('ACL').abi;
    expect(await read(network, LOCAL_FHEVM_CONFIG.ACLAddress, aclAbi, 'owner')).toBe(state.operatorAddress);
    expect(await code(network, HARDHAT_PLUGIN_MOCK.kmsVerifierAddress)).toBe('0x');
    expect(
      await read(
        network,
        LOCAL_FHEVM_CONFIG.KMSVerifierAddress,
        hostArtifact('KMSVerifier').abi,
        'getKmsSigners',
      ),
    ).toEqual([new Wallet(state.mockSigners.kmsSignerKey).address]);
    expect(await rpcBody(network, 'fhevm_relayer_metadata')).toMatchObject({
      result: { KMSVerifierAddress: LOCAL_FHEVM_CONFIG.KMSVerifierAddress },
    });
  });

  it('moves and decrypts money as before: a confidential transfer, and a redeem whose KMS proof the token checks', async () => {
    const alice = newWallet();
    const bob = newWallet();
    await fund(network, alice, 900_000n);
    await confidentialTransfer(network, alice, bob.address, 300_000n);
    await redeem(network, alice, 200_000n);
    expect(await decryptConfidentialBalance(network, alice.privateKey)).toBe(400_000n);
    expect(await decryptConfidentialBalance(network, bob.privateKey)).toBe(300_000n);
    expect(await getStablecoinBalance(network, alice.address)).toBe(200_000n);
  });
});
