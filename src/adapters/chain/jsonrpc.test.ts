import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedNetwork, type EmbeddedNetwork } from './embedded.ts';
import { RpcError } from './evm.ts';
import { handleJsonRpcBody, isDevnetRpcMethod, isPublicRpcMethod, jsonRpcParseError } from './jsonrpc.ts';
import { signTransaction } from './tx.ts';

const fake = async ({ method, params }: { method: string; params?: unknown }) => {
  if (method === 'eth_chainId') return '0x7a69';
  if (method === 'eth_echo') return params;
  if (method === 'eth_fail') throw new RpcError(3, 'execution reverted', '0x1234');
  if (method === 'eth_crash') throw new Error('boom');
  if (method === 'hardhat_setBalance') return true;
  return undefined;
};

describe('handleJsonRpcBody', () => {
  it('answers a single request', async () => {
    expect(
      await handleJsonRpcBody(fake, { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] }),
    ).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: '0x7a69',
    });
  });

  it('answers a batch in order and leaves notifications out', async () => {
    const body = [
      { jsonrpc: '2.0', id: 'a', method: 'eth_echo', params: [1] },
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 'b', method: 'eth_chainId' },
    ];
    expect(await handleJsonRpcBody(fake, body)).toEqual([
      { jsonrpc: '2.0', id: 'a', result: [1] },
      { jsonrpc: '2.0', id: 'b', result: '0x7a69' },
    ]);
    expect(await handleJsonRpcBody(fake, [{ jsonrpc: '2.0', method: 'eth_chainId' }])).toBeNull();
  });

  it('maps errors to JSON-RPC errors', async () => {
    expect(await handleJsonRpcBody(fake, { jsonrpc: '2.0', id: 1, method: 'eth_fail' })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: 3, message: 'execution reverted', data: '0x1234' },
    });
    expect(await handleJsonRpcBody(fake, { jsonrpc: '2.0', id: 2, method: 'eth_crash' })).toMatchObject({
      error: { code: -32603, message: 'boom' },
    });
    expect(await handleJsonRpcBody(fake, 'nope')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await handleJsonRpcBody(fake, { id: 3, method: 'eth_chainId' })).toMatchObject({
      id: 3,
      error: { code: -32600 },
    });
    expect(await handleJsonRpcBody(fake, [])).toMatchObject({ error: { code: -32600 } });
    expect(
      await handleJsonRpcBody(
        fake,
        Array.from({ length: 3 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' })),
        { maxBatch: 2 },
      ),
    ).toMatchObject({ error: { code: -32600 } });
    expect(jsonRpcParseError()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
  });

  it('serves only wallet methods unless told otherwise', async () => {
    expect(isPublicRpcMethod('eth_sendRawTransaction')).toBe(true);
    expect(isPublicRpcMethod('eth_sendTransaction')).toBe(false);
    expect(isPublicRpcMethod('eth_sendTransactionSync')).toBe(false);
    expect(isPublicRpcMethod('eth_sendUnsignedTransaction')).toBe(false);
    expect(isPublicRpcMethod('eth_sendRawTransactionSync')).toBe(true);
    expect(isPublicRpcMethod('evm_mine')).toBe(false);
    const body = { jsonrpc: '2.0', id: 1, method: 'hardhat_setBalance', params: [] };
    expect(await handleJsonRpcBody(fake, body)).toMatchObject({ error: { code: -32601 } });
    expect(await handleJsonRpcBody(fake, body, { allowMethod: () => true })).toMatchObject({ result: true });
  });

  it('serves the fhEVM relayer methods, never the debug ones that reveal cleartexts', () => {
    for (const allowed of [isPublicRpcMethod, isDevnetRpcMethod]) {
      expect(allowed('fhevm_relayer_metadata')).toBe(true);
      expect(allowed('fhevm_relayer_v1_input_proof')).toBe(true);
      expect(allowed('fhevm_relayer_v1_user_decrypt')).toBe(true);
      expect(allowed('fhevm_relayer_v1_delegated_user_decrypt')).toBe(true);
      expect(allowed('fhevm_relayer_v1_public_decrypt')).toBe(true);
      expect(allowed('fhevm_getClearText')).toBe(false);
      expect(allowed('fhevm_createDecryptionSignatures')).toBe(false);
    }
    expect(isPublicRpcMethod('eth_sendTransaction')).toBe(false);
    expect(isPublicRpcMethod('personal_sign')).toBe(false);
    // The devnet also serves the development methods, as hardhat node and anvil do, and signs for the test
    // mnemonic's accounts (dev-accounts.ts; the chain refuses the others).
    expect(isDevnetRpcMethod('evm_mine')).toBe(true);
    expect(isDevnetRpcMethod('evm_increaseTime')).toBe(true);
    expect(isDevnetRpcMethod('eth_sendTransaction')).toBe(true);
    expect(isDevnetRpcMethod('eth_signTypedData_v4')).toBe(true);
  });
});

describe('handleJsonRpcBody over the embedded network', () => {
  let dataDir: string;
  let network: EmbeddedNetwork;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sealpay-jsonrpc-'));
    network = await createEmbeddedNetwork({ dataDir });
  });
  afterAll(async () => {
    await network?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accepts a raw transaction from a wallet, journals it and mines it', async () => {
    const signed = await signTransaction(network, {
      privateKey: network.operator.privateKey,
      to: '0x00000000000000000000000000000000000000bb',
      value: parseEther('2'),
    });
    const before = network.journalLength();
    const response = await handleJsonRpcBody(network.rpc, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_sendRawTransaction',
      params: [signed.serialized],
    });
    expect(response).toEqual({ jsonrpc: '2.0', id: 1, result: signed.hash });
    expect(network.journalLength()).toBe(before + 1);
    const balance = await handleJsonRpcBody(network.rpc, {
      jsonrpc: '2.0',
      id: 2,
      method: 'eth_getBalance',
      params: ['0x00000000000000000000000000000000000000bb', 'latest'],
    });
    expect(balance).toEqual({ jsonrpc: '2.0', id: 2, result: `0x${parseEther('2').toString(16)}` });
  });

  it('answers the relayer metadata a dApp builds its MockFhevmInstance from (the /rpc of npm start)', async () => {
    const response = await handleJsonRpcBody(network.rpc, {
      jsonrpc: '2.0',
      id: 3,
      method: 'fhevm_relayer_metadata',
      params: [],
    });
    expect(response).toMatchObject({
      result: {
        chainId: 31337,
        ACLAddress: '0x50157CFfD6bBFA2DECe204a89ec419c23ef5755D',
        // The one @fhevm/hardhat-plugin compiles into dApps (the other, ZamaConfig's, is set up alike).
        KMSVerifierAddress: '0xbE0E383937d564D7FF0BC3b46c51f0bF8d5C311A',
        CoprocessorAddress: '0xe3a9105a3a932253A70F126eb1E3b589C643dD24',
      },
    });
    const clear = await handleJsonRpcBody(network.rpc, {
      jsonrpc: '2.0',
      id: 4,
      method: 'fhevm_getClearText',
      params: [[`0x${'11'.repeat(32)}`]],
    });
    expect(clear).toMatchObject({ error: { code: -32601 } });
  });
});
