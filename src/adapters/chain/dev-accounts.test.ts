/**
 * The devnet's development accounts (`dev-accounts.ts`) over the devnet's JSON-RPC handler: the ten accounts of the
 * test mnemonic, funded once, signed for by the node as `hardhat node` does, every transaction journaled as the raw
 * bytes it signed. (That `npm start`'s `/rpc` lists none and signs nothing: fhevm-host.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Address,
  type Hex,
  keccak256,
  parseEther,
  parseTransaction,
  recoverMessageAddress,
  recoverTypedDataAddress,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_ACCOUNT_BALANCE, withDevAccounts } from './dev-accounts.ts';
import { createEmbeddedNetwork, type EmbeddedNetwork } from './embedded.ts';
import { handleJsonRpcBody, isDevnetRpcMethod, type RpcFunction } from './jsonrpc.ts';
import { waitForReceipt } from './tx.ts';

/** The first and last of the ten accounts `hardhat node` and `anvil` print for the test mnemonic. */
const FIRST = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const TENTH = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';

describe('the development accounts of sealpay devnet', () => {
  let dataDir: string;
  let network: EmbeddedNetwork;
  let rpc: RpcFunction;

  const open = async () => {
    network = await createEmbeddedNetwork({ dataDir, fundDevAccounts: true });
    rpc = withDevAccounts(network.rpc, network);
  };
  /** One JSON-RPC request as the devnet's HTTP server hands it over. */
  const call = async (method: string, params: unknown[] = []) =>
    (await handleJsonRpcBody(
      rpc,
      { jsonrpc: '2.0', id: 1, method, params },
      { allowMethod: isDevnetRpcMethod },
    )) as {
      result?: unknown;
      error?: { code: number; message: string };
    };
  const balance = async (address: string) =>
    BigInt((await call('eth_getBalance', [address, 'latest'])).result as Hex);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-dev-accounts-'));
    await open();
  });
  afterAll(async () => {
    await network?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists the ten accounts of the test mnemonic, 10,000 ETH each', async () => {
    const accounts = (await call('eth_accounts')).result as string[];
    expect(accounts).toHaveLength(10);
    expect(accounts[0]).toBe(FIRST);
    expect(accounts[9]).toBe(TENTH);
    expect(DEV_ACCOUNT_BALANCE).toBe(parseEther('10000'));
    for (const account of accounts) expect(await balance(account)).toBe(DEV_ACCOUNT_BALANCE);
  });

  it('signs eth_sendTransaction for them, one nonce each even when sent together, and journals the raw bytes', async () => {
    const before = network.journalLength();
    const to = '0x00000000000000000000000000000000000000c0';
    const hashes = await Promise.all(
      [1n, 2n, 3n].map(async (value) => {
        const answer = await call('eth_sendTransaction', [
          { from: FIRST, to, value: `0x${value.toString(16)}` },
        ]);
        expect(answer.error).toBeUndefined();
        return answer.result as Hex;
      }),
    );
    const receipts = await Promise.all(hashes.map((hash) => waitForReceipt(network, hash)));
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success', 'success']);
    expect(await balance(to)).toBe(6n);
    const nonces = await Promise.all(
      hashes.map(async (hash) => (await network.publicClient.getTransaction({ hash })).nonce),
    );
    expect(new Set(nonces).size).toBe(3);

    // What the journal holds is what the node signed: raw transactions whose hashes are the answers.
    const entries = readFileSync(path.join(dataDir, 'chain', 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(before)
      .map((line) => JSON.parse(line) as { k: string; m: string; p: [Hex] });
    expect(entries.map((entry) => [entry.k, entry.m])).toEqual(
      hashes.map(() => ['tx', 'eth_sendRawTransaction']),
    );
    expect(entries.map((entry) => keccak256(entry.p[0])).sort()).toEqual([...hashes].sort());
    expect(parseTransaction(entries[0]?.p[0] as Hex).chainId).toBe(31337);
  });

  it('signs messages and typed data (EIP-712, as a decryption grant) for them', async () => {
    const message = '0x68656c6c6f';
    for (const [method, params] of [
      ['personal_sign', [message, FIRST]],
      ['eth_sign', [FIRST, message]],
    ] as const) {
      const signature = (await call(method, [...params])).result as Hex;
      expect(await recoverMessageAddress({ message: { raw: message }, signature })).toBe(
        '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
      );
    }
    const typedData = {
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        UserDecryptRequestVerification: [
          { name: 'publicKey', type: 'bytes' },
          { name: 'contractAddresses', type: 'address[]' },
          { name: 'startTimestamp', type: 'uint256' },
          { name: 'durationDays', type: 'uint256' },
        ],
      },
      primaryType: 'UserDecryptRequestVerification',
      domain: {
        name: 'Decryption',
        version: '1',
        chainId: 10901,
        verifyingContract: '0x5ffdaAB0373E62E2ea2944776209aEf29E631A64',
      },
      message: {
        publicKey: '0x1234',
        contractAddresses: ['0x00000000000000000000000000000000000000c0'],
        startTimestamp: '1700000000',
        durationDays: '10',
      },
    } as const;
    // As ethers' JsonRpcSigner and hardhat-ethers send it: a JSON string.
    const signature = (await call('eth_signTypedData_v4', [TENTH, JSON.stringify(typedData)])).result as Hex;
    const { EIP712Domain: _domain, ...types } = typedData.types;
    expect(
      await recoverTypedDataAddress({
        domain: typedData.domain,
        types,
        primaryType: typedData.primaryType,
        message: { ...typedData.message, startTimestamp: 1700000000n, durationDays: 10n },
        signature,
      }),
    ).toBe('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720');
  });

  it('signs for no other account, and refuses a transaction for another chain', async () => {
    const stranger: Address = '0x00000000000000000000000000000000000000c1';
    expect((await call('eth_sendTransaction', [{ from: stranger, to: stranger }])).error).toBeDefined();
    expect((await call('personal_sign', ['0x00', stranger])).error).toBeDefined();
    expect(
      (await call('eth_sendTransaction', [{ from: FIRST, to: stranger, chainId: '0x1' }])).error,
    ).toMatchObject({ code: -32602 });
  });

  it('sends for another account only while it is impersonated, as hardhat node does, and signs no message for it', async () => {
    const stranger: Address = '0x00000000000000000000000000000000000000c2';
    const send = () =>
      call('eth_sendTransaction', [{ from: stranger, to: FIRST, value: '0x1', gas: '0x5208' }]);
    await call('hardhat_setBalance', [stranger, `0x${parseEther('1').toString(16)}`]);
    expect((await send()).error).toBeDefined();

    // A development method of a development chain (Zama's plugin impersonates 0x…00 and 0x…01 on `--network
    // localhost`): the devnet then sends from that address unsigned, as hardhat node and anvil do.
    expect((await call('hardhat_impersonateAccount', [stranger])).error).toBeUndefined();
    const hash = (await send()).result as Hex;
    const receipt = await waitForReceipt(network, hash);
    expect(receipt.status).toBe('success');
    expect(receipt.from).toBe(stranger);
    // It holds no key for it: messages and typed data stay unsigned.
    expect((await call('personal_sign', ['0x00', stranger])).error).toBeDefined();

    expect((await call('anvil_stopImpersonatingAccount', [stranger])).error).toBeUndefined();
    expect((await send()).error).toBeDefined();
    // `npm start`'s `/rpc` answers no development method.
    const refused = (await handleJsonRpcBody(network.rpc, {
      jsonrpc: '2.0',
      id: 1,
      method: 'hardhat_impersonateAccount',
      params: [stranger],
    })) as { error?: { code: number } };
    expect(refused.error?.code).toBe(-32601);
  });

  it('funds them once: a restart keeps what they spent', async () => {
    const spent = await balance(FIRST);
    expect(spent).toBeLessThan(DEV_ACCOUNT_BALANCE);
    await network.close();
    await open();
    expect(await balance(FIRST)).toBe(spent);
    expect(await balance(TENTH)).toBe(DEV_ACCOUNT_BALANCE);
    const state = JSON.parse(readFileSync(path.join(dataDir, 'chain', 'state.json'), 'utf8')) as {
      devAccountsFunded?: boolean;
    };
    expect(state.devAccountsFunded).toBe(true);
  });
});
