import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SepoliaConfig } from '@zama-fhe/relayer-sdk/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSING_PORT } from '../../../test/faults/service.ts';
import { AppError, findAppError } from '../../lib/errors.ts';
import type { FhevmInstanceLike } from '../confidential/fhevm-rail.ts';
import { createNetwork } from './index.ts';
import { createRemoteNetwork } from './remote.ts';

const KEY = `0x${'11'.repeat(32)}` as const;
const CONTRACTS = {
  stablecoin: '0x1000000000000000000000000000000000000001',
  confidentialToken: '0x1000000000000000000000000000000000000002',
  letterVault: '0x1000000000000000000000000000000000000003',
} as const;

describe('remote network configuration', () => {
  it('starts without settings and names what is missing, as 503s', async () => {
    const network = createRemoteNetwork({ network: 'sepolia', contracts: {} });
    expect(network.name).toBe('sepolia');
    expect(network.chainId).toBe(11155111);
    expect(network.explorerBaseUrl).toBe('https://sepolia.etherscan.io');
    expect(network.upstreamRpcUrl).toBeNull();
    expect(network.rpc).toBeNull();
    const ready = await network.ready();
    expect(ready.ok).toBe(false);
    expect(ready.detail).toContain('RPC_URL');
    expect(ready.detail).toContain('OPERATOR_PRIVATE_KEY');
    expect(ready.detail).toContain('LETTER_VAULT_ADDRESS');

    expect(() => network.operator).toThrow(AppError);
    try {
      void network.operator;
    } catch (error) {
      expect(error).toMatchObject({
        code: 'configuration_missing',
        status: 503,
        details: { variable: 'OPERATOR_PRIVATE_KEY' },
      });
    }
    expect(() => network.contracts.stablecoin).toThrow(/STABLECOIN_ADDRESS/);
    expect(() => network.contracts.confidentialToken).toThrow(/CONFIDENTIAL_TOKEN_ADDRESS/);

    const readError = await network.publicClient.getBlockNumber().catch((e: unknown) => e);
    expect(findAppError(readError)).toMatchObject({
      code: 'configuration_missing',
      details: { variable: 'RPC_URL' },
    });

    await expect(
      network.rail.encryptAmount({
        contract: CONTRACTS.confidentialToken,
        caller: CONTRACTS.stablecoin,
        amount: 1n,
      }),
    ).rejects.toMatchObject({ code: 'fhe_credentials_missing', status: 503 });
  });

  it('rejects malformed settings at construction', () => {
    expect(() => createRemoteNetwork({ network: 'mainnet', rpcUrl: 'ftp://x', contracts: {} })).toThrow(
      /RPC_URL/,
    );
    expect(() =>
      createRemoteNetwork({ network: 'mainnet', rpcUrl: 'https://a.example, b.example', contracts: {} }),
    ).toThrow(/RPC_URL/);
    expect(() =>
      createRemoteNetwork({ network: 'mainnet', operatorPrivateKey: '0x12', contracts: {} }),
    ).toThrow(/OPERATOR_PRIVATE_KEY/);
    expect(() =>
      createRemoteNetwork({ network: 'mainnet', contracts: { letterVault: 'nope' as `0x${string}` } }),
    ).toThrow(/LETTER_VAULT_ADDRESS/);
  });

  it('mainnet uses Etherscan and chain 1', async () => {
    const network = await createNetwork({ network: 'mainnet', dataDir: '/nonexistent' });
    expect(network.chainId).toBe(1);
    expect(network.explorerBaseUrl).toBe('https://etherscan.io');
  });
});

describe('remote network over a JSON-RPC endpoint', () => {
  let server: Server;
  let url: string;
  let chainIdAnswer = '0xaa36a7';
  const calls: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const request = JSON.parse(body) as { id: number; method: string; params: unknown[] };
        calls.push(request.method);
        const results: Record<string, unknown> = {
          eth_chainId: chainIdAnswer,
          eth_blockNumber: '0x10',
          eth_getBalance: '0xde0b6b3a7640000',
        };
        const reply =
          request.method in results
            ? { jsonrpc: '2.0', id: request.id, result: results[request.method] }
            : { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'not found' } };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads through viem and is ready once every setting is there', async () => {
    const full = createRemoteNetwork({
      network: 'sepolia',
      rpcUrl: url,
      zamaApiKey: 'key',
      operatorPrivateKey: KEY,
      contracts: CONTRACTS,
    });
    expect(full.upstreamRpcUrl).toBe(url);
    expect(await full.publicClient.getBlockNumber()).toBe(16n);
    expect(await full.publicClient.getBalance({ address: CONTRACTS.letterVault })).toBe(10n ** 18n);
    expect(await full.ready()).toEqual({ ok: true });
    expect(full.contracts.letterVault).toBe(CONTRACTS.letterVault);
    expect(full.operator.address).toBe('0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A');

    const partial = createRemoteNetwork({ network: 'sepolia', rpcUrl: url, contracts: CONTRACTS });
    expect(await partial.ready()).toMatchObject({
      ok: false,
      detail: expect.stringContaining('ZAMA_API_KEY'),
    });
  });

  it('is not ready when RPC_URL serves another chain', async () => {
    chainIdAnswer = '0x1';
    try {
      const network = createRemoteNetwork({
        network: 'sepolia',
        rpcUrl: url,
        zamaApiKey: 'key',
        operatorPrivateKey: KEY,
        contracts: CONTRACTS,
      });
      expect(await network.ready()).toMatchObject({ ok: false, detail: expect.stringContaining('chain 1') });
    } finally {
      chainIdAnswer = '0xaa36a7';
    }
  });

  it('creates the relayer instance lazily, once, with the network config and the API key', async () => {
    const configs: unknown[] = [];
    const instance: FhevmInstanceLike = {
      createEncryptedInput: () => ({
        add64: () => undefined,
        encrypt: async () => ({ handles: [new Uint8Array(32).fill(1)], inputProof: new Uint8Array([1, 2]) }),
      }),
      generateKeypair: () => ({ publicKey: 'aa', privateKey: 'bb' }),
      createEIP712: () => {
        throw new Error('unused');
      },
      userDecrypt: async () => ({}),
      publicDecrypt: async () => ({
        clearValues: { [`0x${'01'.repeat(32)}`]: 5n },
        abiEncodedClearValues: '0x05',
        decryptionProof: '0x06',
      }),
    };
    const network = createRemoteNetwork({
      network: 'sepolia',
      rpcUrl: url,
      zamaApiKey: 'secret',
      contracts: CONTRACTS,
      createInstance: async (config) => {
        configs.push(config);
        return instance;
      },
    });
    expect(configs).toHaveLength(0);
    const encrypted = await network.rail.encryptAmount({
      contract: CONTRACTS.confidentialToken,
      caller: CONTRACTS.stablecoin,
      amount: 5n,
    });
    expect(encrypted).toEqual({ handle: `0x${'01'.repeat(32)}`, inputProof: '0x0102' });
    expect(await network.rail.publicDecrypt([`0x${'01'.repeat(32)}`])).toEqual({
      cleartexts: [5n],
      abiEncodedCleartexts: '0x05',
      decryptionProof: '0x06',
    });
    expect(configs).toHaveLength(1);
    expect(configs[0]).toMatchObject({
      aclContractAddress: SepoliaConfig.aclContractAddress,
      chainId: 11155111,
      network: url,
      auth: { __type: 'ApiKeyHeader', value: 'secret' },
    });
    expect(network.rail.kind).toBe('fhe');
  });

  it('with several providers, reads fail over and the relayer SDK reads the chain through the same list', async () => {
    const configs: { network: unknown }[] = [];
    const network = createRemoteNetwork({
      network: 'sepolia',
      // The first provider refuses every connection.
      rpcUrl: `http://127.0.0.1:${REFUSING_PORT}/key,${url}`,
      zamaApiKey: 'key',
      operatorPrivateKey: KEY,
      contracts: CONTRACTS,
      createInstance: async (config) => {
        configs.push(config as { network: unknown });
        throw new Error('offline');
      },
    });
    expect(network.upstreamRpcUrl).toBe(`http://127.0.0.1:${REFUSING_PORT}/key`);
    expect(await network.publicClient.getBlockNumber()).toBe(16n);
    expect(await network.ready()).toEqual({ ok: true });
    await network.rail
      .encryptAmount({ contract: CONTRACTS.confidentialToken, caller: CONTRACTS.stablecoin, amount: 1n })
      .catch(() => null);
    const eip1193 = configs[0]?.network as { request: (args: { method: string }) => Promise<unknown> };
    expect(await eip1193.request({ method: 'eth_chainId' })).toBe('0xaa36a7');
  });
});
