/**
 * `sealpay devnet` as a dApp and a service see it: a real child process serving JSON-RPC.
 *
 * - A `MockFhevmInstance` of `@fhevm/mock-utils` pointed at its URL encrypts an input (a confidential transfer) and
 *   decrypts a balance its key may see; a stranger's or a forged grant is refused by the devnet itself, and the
 *   debug methods that reveal cleartexts are not served.
 * - A browser dApp built like Zama's React template takes it for a mock fhEVM node (client version, relayer
 *   metadata, the verifiers' EIP-712 domains), and wallets that leave signing to the node (Hardhat's `localhost`
 *   accounts) send and sign with the test mnemonic's funded accounts.
 * - A service process on `NETWORK=devnet` (the settings from `devnet.env`) moves money, and the devnet keeps its
 *   state through kill -9.
 * - After SIGTERM the devnet starts from the snapshot it took on the way out, after kill -9 from its newest snapshot
 *   and the journal after it: identical blocks (hashes included), receipts, balances and decryptions.
 */
import { randomBytes } from 'node:crypto';
import { MockFhevmInstance } from '@fhevm/mock-utils';
import { Contract, JsonRpcProvider } from 'ethers';
import { type Address, getAddress, toHex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { sendTransactionOrThrow } from '../../src/adapters/chain/tx.ts';
import { createMockFhevmClient } from '../../src/adapters/confidential/fhevm-mock-client.ts';
import { createFhevmRail } from '../../src/adapters/confidential/fhevm-rail.ts';
import {
  decryptConfidentialBalance,
  encodeApprove,
  encodeConfidentialTransfer,
  encodeMint,
  encodeWrap,
  getConfidentialBalanceHandle,
} from '../../src/adapters/confidential/helpers.ts';
import {
  chainEngineOf,
  createWallet,
  devnetNetwork,
  freshDataDir,
  kill9,
  LOAD_ENV,
  readDevnetEnv,
  request,
  type ServiceProcess,
  seededDataDir,
  signupWithKey,
  spawnService,
  stopGracefully,
  waitForOutput,
  waitGone,
  waitReady,
  waitTerminal,
} from '../faults/service.ts';
import { chainView, confidentialTransfer, fund, newWallet } from '../support/chain-fixtures.ts';

const running: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((service) => kill9(service)));
});

async function startDevnet(dataDir: string, port?: number): Promise<ServiceProcess> {
  const devnet = await spawnService({ command: 'devnet', dataDir, ...(port ? { port } : {}) });
  running.push(devnet);
  await waitForOutput(devnet, /sealpay devnet: JSON-RPC/);
  return devnet;
}

async function rpc(url: string, method: string, params: unknown[] = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
}

describe('sealpay devnet', () => {
  const dataDir = freshDataDir('sealpay-devnet-');
  let devnet: ServiceProcess;
  let settings: Record<string, string>;

  it('writes devnet.env with the settings of NETWORK=devnet, the key kept out of its output', async () => {
    devnet = await startDevnet(dataDir);
    settings = readDevnetEnv(dataDir);
    expect(Object.keys(settings)).toEqual([
      'NETWORK',
      'RPC_URL',
      'STABLECOIN_ADDRESS',
      'CONFIDENTIAL_TOKEN_ADDRESS',
      'LETTER_VAULT_ADDRESS',
      'TRANSFER_BATCHER_ADDRESS',
      'OPERATOR_PRIVATE_KEY',
    ]);
    expect(settings.NETWORK).toBe('devnet');
    expect(settings.RPC_URL).toBe(`http://127.0.0.1:${devnet.port}`);
    expect(devnet.output()).toContain(`STABLECOIN_ADDRESS=${settings.STABLECOIN_ADDRESS}`);
    expect(devnet.output()).not.toContain((settings.OPERATOR_PRIVATE_KEY as string).slice(2));
    expect((await rpc(settings.RPC_URL as string, 'eth_chainId')).result).toBe('0x7a69');
  });

  it('a MockFhevmInstance on its URL encrypts an input and decrypts a balance it may see, and no other', async () => {
    const url = settings.RPC_URL as string;
    const network = devnetNetwork(settings);
    const operator = network.operator.privateKey;
    const userKey = generatePrivateKey();
    const user = privateKeyToAccount(userKey).address;
    const recipient = getAddress(toHex(randomBytes(20)));
    const token = network.contracts.confidentialToken;
    await sendTransactionOrThrow(network, { privateKey: operator, to: user, value: 10n ** 18n });
    await sendTransactionOrThrow(network, {
      privateKey: operator,
      to: network.contracts.stablecoin,
      data: encodeMint(user, 50_000_000n),
    });
    await sendTransactionOrThrow(network, {
      privateKey: userKey,
      to: network.contracts.stablecoin,
      data: encodeApprove(token, 50_000_000n),
    });
    await sendTransactionOrThrow(network, {
      privateKey: userKey,
      to: token,
      data: encodeWrap(user, 50_000_000n),
    });

    // The dApp's client, built exactly as against `hardhat node` with Zama's plugin.
    const instance = await createMockFhevmClient(url);
    const input = instance.createEncryptedInput(token, user);
    input.add64(20_000_000n);
    const { handles, inputProof } = await input.encrypt();
    await sendTransactionOrThrow(network, {
      privateKey: userKey,
      to: token,
      data: encodeConfidentialTransfer(recipient, {
        handle: toHex(handles[0] as Uint8Array, { size: 32 }),
        inputProof: toHex(inputProof),
      }),
      gas: 1_000_000n,
    });
    const rail = createFhevmRail('mock', async () => instance);
    expect(await decryptConfidentialBalance({ ...network, rail }, userKey)).toBe(30_000_000n);

    // Refused by the devnet itself, whatever a client checks: a grant signed by someone else, and a stranger's own.
    const handle = await getConfidentialBalanceHandle(network, user);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const keypair = instance.generateKeypair();
    const start = Math.floor(Date.now() / 1000) - 60;
    const eip712 = instance.createEIP712(keypair.publicKey, [token], start, 1);
    const { EIP712Domain: _domain, ...types } = eip712.types;
    const strangerSignature = await stranger.signTypedData({
      domain: eip712.domain,
      types,
      primaryType: eip712.primaryType,
      message: eip712.message,
    } as unknown as Parameters<typeof stranger.signTypedData>[0]);
    const payload = (userAddress: Address) => ({
      handleContractPairs: [{ handle, contractAddress: token }],
      requestValidity: { startTimestamp: String(start), durationDays: '1' },
      contractsChainId: '31337',
      contractAddresses: [token],
      userAddress,
      signature: strangerSignature.slice(2),
      publicKey: keypair.publicKey,
      extraData: '0x00',
    });
    const forged = await rpc(url, 'fhevm_relayer_v1_user_decrypt', [payload(user)]);
    expect(forged.error?.message).toMatch(/signature/i);
    const notAllowed = await rpc(url, 'fhevm_relayer_v1_user_decrypt', [payload(stranger.address)]);
    expect(notAllowed.error?.message).toMatch(/not authorized/i);
    const publicAttempt = await rpc(url, 'fhevm_relayer_v1_public_decrypt', [
      { ciphertextHandles: [handle], extraData: '0x00' },
    ]);
    expect(publicAttempt.error?.message).toMatch(/not allowed for public decryption/i);
    for (const method of ['fhevm_getClearText', 'fhevm_createDecryptionSignatures']) {
      expect((await rpc(url, method, [[handle]])).error?.code).toBe(-32601);
    }
    // The node signs for the test mnemonic's accounts only (dev-accounts.ts), never for a key it does not hold.
    const unsigned = await rpc(url, 'eth_sendTransaction', [{ from: user, to: recipient, value: '0x1' }]);
    expect(unsigned.error).toBeDefined();
  });

  it("is a mock fhEVM node to a dApp built like Zama's React template, and signs for the test accounts", async () => {
    const url = settings.RPC_URL as string;
    const network = devnetNetwork(settings);
    const provider = new JsonRpcProvider(url, undefined, { staticNetwork: true, cacheTimeout: -1 });
    try {
      // What the React template checks before it builds a MockFhevmInstance for chain 31337.
      expect(((await provider.send('web3_clientVersion', [])) as string).toLowerCase()).toContain('hardhat');
      const metadata = (await provider.send('fhevm_relayer_metadata', [])) as Record<string, string>;
      for (const field of ['ACLAddress', 'InputVerifierAddress', 'KMSVerifierAddress']) {
        expect(metadata[field]).toMatch(/^0x[0-9a-fA-F]{40}$/);
      }
      const domainOf = async (address: string) =>
        (await new Contract(
          address,
          [
            'function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])',
          ],
          provider,
        ).getFunction('eip712Domain')()) as [string, string, string, bigint, string];
      const kmsDomain = await domainOf(metadata.KMSVerifierAddress as string);
      const inputDomain = await domainOf(metadata.InputVerifierAddress as string);
      // Signers and thresholds left for the instance to read from the verifiers, as the template leaves them.
      const instance = await MockFhevmInstance.create(
        provider,
        provider,
        {
          aclContractAddress: metadata.ACLAddress as Address,
          chainId: 31337,
          gatewayChainId: Number(kmsDomain[3]),
          inputVerifierContractAddress: metadata.InputVerifierAddress as Address,
          kmsContractAddress: metadata.KMSVerifierAddress as Address,
          verifyingContractAddressDecryption: kmsDomain[4] as Address,
          verifyingContractAddressInputVerification: inputDomain[4] as Address,
        },
        { kmsVerifierProperties: {}, inputVerifierProperties: {} },
      );

      // The node's first account (funded, signed for by the devnet), as Hardhat's `localhost` network uses it.
      const [first] = (await provider.send('eth_accounts', [])) as [string];
      const signer = await provider.getSigner(first);
      const holder = getAddress(first);
      const token = network.contracts.confidentialToken;
      await sendTransactionOrThrow(network, {
        privateKey: network.operator.privateKey,
        to: network.contracts.stablecoin,
        data: encodeMint(holder, 9_000_000n),
      });
      for (const [to, data] of [
        [network.contracts.stablecoin, encodeApprove(token, 9_000_000n)],
        [token, encodeWrap(holder, 9_000_000n)],
      ] as const) {
        expect((await (await signer.sendTransaction({ to, data })).wait())?.status).toBe(1);
      }
      const input = instance.createEncryptedInput(token, holder);
      input.add64(4_000_000n);
      const { handles, inputProof } = await input.encrypt();
      const transfer = await signer.sendTransaction({
        to: token,
        data: encodeConfidentialTransfer(getAddress(toHex(randomBytes(20))), {
          handle: toHex(handles[0] as Uint8Array, { size: 32 }),
          inputProof: toHex(inputProof),
        }),
        gasLimit: 1_000_000n,
      });
      expect((await transfer.wait())?.status).toBe(1);

      // The decryption grant signed by the node (eth_signTypedData_v4), as a Hardhat signer of `localhost` signs it.
      const handle = await getConfidentialBalanceHandle(network, holder);
      const keypair = instance.generateKeypair();
      const start = Math.floor(Date.now() / 1000) - 60;
      const eip712 = instance.createEIP712(keypair.publicKey, [token], start, 1);
      const signature = await signer.signTypedData(
        eip712.domain,
        { UserDecryptRequestVerification: [...eip712.types.UserDecryptRequestVerification] },
        eip712.message,
      );
      const decrypted = await instance.userDecrypt(
        [{ handle, contractAddress: token }],
        keypair.privateKey,
        keypair.publicKey,
        signature.slice(2),
        [token],
        holder,
        start,
        1,
      );
      expect(decrypted[handle]).toBe(5_000_000n);
    } finally {
      provider.destroy();
    }
  });

  it('serves a NETWORK=devnet service that moves money, and keeps its state through kill -9', async () => {
    const serviceDir = seededDataDir('sealpay-devnet-service-');
    const service = await spawnService({
      dataDir: serviceDir,
      env: { ...LOAD_ENV, ...settings, MASTER_KEY: randomBytes(32).toString('hex') },
    });
    running.push(service);
    await waitReady(service);
    const network = (await request(service.baseUrl, 'GET', '/api/v1/network')).body.data;
    expect(network).toMatchObject({ network: 'devnet', environment: 'sandbox', confidentiality: 'mock' });
    expect(network.rpcUrl).toBe(settings.RPC_URL);

    const client = await signupWithKey(service.baseUrl);
    const wallet = await createWallet(service.baseUrl, client);
    const post = async (path: string, body: Record<string, string>) => {
      const response = await request(service.baseUrl, 'POST', `/api/v1${path}`, {
        headers: client.headers,
        body,
      });
      expect(response.status).toBe(201);
      return waitTerminal(service.baseUrl, client, response.body.data.transaction.id);
    };
    expect((await post('/fund', { walletId: wallet.id, amount: '100' })).status).toBe('CONFIRMED');
    expect((await post('/mint', { walletId: wallet.id, amount: '40' })).status).toBe('CONFIRMED');
    const to = getAddress(toHex(randomBytes(20)));
    expect((await post('/transfer', { walletId: wallet.id, to, amount: '5' })).status).toBe('CONFIRMED');

    await kill9(devnet);
    devnet = await startDevnet(dataDir, devnet.port);
    expect(readDevnetEnv(dataDir)).toEqual(settings);
    const balances = await request(service.baseUrl, 'GET', `/api/v1/balances?walletId=${wallet.id}`, {
      headers: client.headers,
    });
    expect(balances.status).toBe(200);
    expect(balances.body.data.balances[0].confidential.amount).toBe('35.00');
    expect(balances.body.data.balances[0].normal.amount).toBe('60.00');
    expect((await post('/transfer', { walletId: wallet.id, to, amount: '1.5' })).status).toBe('CONFIRMED');
  });

  it('restarts from its snapshot after SIGTERM, and from its snapshot and journal after kill -9, to the same chain', async () => {
    const restartDir = freshDataDir('sealpay-devnet-restart-');
    let node = await startDevnet(restartDir);
    const network = devnetNetwork(readDevnetEnv(restartDir));
    const alice = newWallet();
    const bob = newWallet();
    await fund(network, alice, 1_000_000n);
    const receipts = [await confidentialTransfer(network, alice, bob.address, 10n)];
    let before = await chainView(network, [alice, bob]);

    await stopGracefully(node);
    expect((await node.exited).code).toBe(0);
    node = await startDevnet(restartDir, node.port);
    expect(node.output()).toMatch(/snapshot of \d+ entries, then 0 journal entries replayed/);
    expect(await chainView(network, [alice, bob])).toEqual(before);

    receipts.push(await confidentialTransfer(network, alice, bob.address, 20n));
    before = await chainView(network, [alice, bob]);
    expect(before.wallets[1]?.confidential).toBe(30n);
    const engine = chainEngineOf(node);
    await kill9(node);
    // Its anvil went with it.
    await waitGone([engine.guard, engine.anvil]);
    node = await startDevnet(restartDir, node.port);
    const replayed = /snapshot of \d+ entries, then (\d+) journal entries replayed/.exec(node.output());
    expect(Number(replayed?.[1])).toBeGreaterThan(0);
    expect(await chainView(network, [alice, bob])).toEqual(before);
    for (const receipt of receipts) {
      const again = await network.publicClient.getTransactionReceipt({ hash: receipt.transactionHash });
      expect(again.blockHash).toBe(receipt.blockHash);
    }
  });
});
