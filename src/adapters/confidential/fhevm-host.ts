/**
 * The fhEVM host contracts on the embedded chain, placed as `@fhevm/hardhat-plugin` places them on Hardhat: the
 * contracts of `@fhevm/host-contracts` (FHEVMExecutor, ACL, KMSVerifier, InputVerifier, HCULimit) with
 * `hardhat_setCode` at the addresses `@fhevm/solidity`'s ZamaConfig uses for chain 31337, the two verifiers
 * initialized with one mock KMS signer and one mock coprocessor signer.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setInitializableStorage, setOwnableStorage } from '@fhevm/mock-utils';
import { SepoliaConfig } from '@zama-fhe/relayer-sdk/node';
import { Wallet } from 'ethers';
import { type Abi, type Address, decodeFunctionResult, encodeFunctionData, getAddress, type Hex } from 'viem';
import type { Eip1193 } from '../chain/evm.ts';

const require = createRequire(import.meta.url);

/** `ZamaConfig._getLocalConfig()` of `@fhevm/solidity` 0.11.1 (chain 31337). */
export const LOCAL_FHEVM_CONFIG = {
  ACLAddress: '0x50157CFfD6bBFA2DECe204a89ec419c23ef5755D',
  CoprocessorAddress: '0xe3a9105a3a932253A70F126eb1E3b589C643dD24',
  KMSVerifierAddress: '0x901F8942346f7AB3a01F6D7613119Bca447Bb030',
} as const satisfies Record<string, Address>;

type HostContractName = 'FHEVMExecutor' | 'ACL' | 'KMSVerifier' | 'InputVerifier' | 'HCULimit';

interface HostArtifact {
  abi: Abi;
  deployedBytecode: Hex;
}

const artifactCache = new Map<HostContractName, HostArtifact>();

export function hostArtifact(name: HostContractName): HostArtifact {
  let artifact = artifactCache.get(name);
  if (!artifact) {
    const root = path.dirname(require.resolve('@fhevm/host-contracts/package.json'));
    const json = JSON.parse(
      readFileSync(path.join(root, 'artifacts', 'contracts', `${name}.sol`, `${name}.json`), 'utf8'),
    ) as HostArtifact;
    artifact = { abi: json.abi, deployedBytecode: json.deployedBytecode };
    artifactCache.set(name, artifact);
  }
  return artifact;
}

export interface MockSignerKeys {
  kmsSignerKey: Hex;
  coprocessorSignerKey: Hex;
}

export interface HostAddresses {
  acl: Address;
  executor: Address;
  kmsVerifier: Address;
  inputVerifier: Address;
  hcuLimit: Address;
}

/**
 * Gateway-side values the verifiers' EIP-712 domains are initialized with on a new chain: those of
 * `@fhevm/hardhat-plugin` (Sepolia's gateway chain id, the plugin's verifying contracts), so that dApps written
 * against `hardhat node` find the same domains here. The running mock reads the domains back from the chain, so a
 * chain initialized with other values (Sepolia's verifying contracts, before the devnet) keeps working.
 */
const GATEWAY = {
  chainId: Number(SepoliaConfig.gatewayChainId),
  decryptionAddress: getAddress('0x5ffdaAB0373E62E2ea2944776209aEf29E631A64'),
  inputVerificationAddress: getAddress('0x812b06e1CDCE800494b79fFE4f925A504a9A9810'),
};

async function call(chain: Eip1193, to: Address, abi: Abi, functionName: string, args: unknown[] = []) {
  const data = encodeFunctionData({ abi, functionName, args });
  const result = (await chain.request({ method: 'eth_call', params: [{ to, data }, 'latest'] })) as Hex;
  return decodeFunctionResult({ abi, functionName, data: result });
}

/** The addresses the executor's bytecode was compiled with (InputVerifier and HCULimit are not in ZamaConfig). */
export async function resolveHostAddresses(chain: Eip1193): Promise<HostAddresses> {
  const executor = hostArtifact('FHEVMExecutor');
  const at = LOCAL_FHEVM_CONFIG.CoprocessorAddress;
  const code = (await chain.request({ method: 'eth_getCode', params: [at, 'latest'] })) as Hex;
  if (code === '0x') throw new Error('fhEVM host contracts are not deployed');
  const acl = (await call(chain, at, executor.abi, 'getACLAddress')) as Address;
  const inputVerifier = (await call(chain, at, executor.abi, 'getInputVerifierAddress')) as Address;
  const hcuLimit = (await call(chain, at, executor.abi, 'getHCULimitAddress')) as Address;
  if (getAddress(acl) !== LOCAL_FHEVM_CONFIG.ACLAddress) {
    throw new Error(
      `@fhevm/host-contracts FHEVMExecutor uses ACL ${acl}, @fhevm/solidity's ZamaConfig expects ${LOCAL_FHEVM_CONFIG.ACLAddress}`,
    );
  }
  return {
    acl: LOCAL_FHEVM_CONFIG.ACLAddress,
    executor: at,
    kmsVerifier: LOCAL_FHEVM_CONFIG.KMSVerifierAddress,
    inputVerifier: getAddress(inputVerifier),
    hcuLimit: getAddress(hcuLimit),
  };
}

/**
 * Places and initializes the host contracts (first start only; every call goes through the journaled chain).
 * `sendAsOwner` sends a transaction signed by the ACL owner (the operator) and waits for it.
 */
export async function deployFhevmHost(
  chain: Eip1193,
  params: {
    owner: Address;
    signers: MockSignerKeys;
    sendAsOwner: (tx: { to: Address; data: Hex }) => Promise<void>;
  },
): Promise<HostAddresses> {
  const setCode = (address: Address, name: HostContractName) =>
    chain.request({ method: 'hardhat_setCode', params: [address, hostArtifact(name).deployedBytecode] });
  await setCode(LOCAL_FHEVM_CONFIG.CoprocessorAddress, 'FHEVMExecutor');
  const addresses = await resolveHostAddresses(chain);
  await setCode(addresses.acl, 'ACL');
  await setCode(addresses.kmsVerifier, 'KMSVerifier');
  await setCode(addresses.inputVerifier, 'InputVerifier');
  await setCode(addresses.hcuLimit, 'HCULimit');

  await setOwnableStorage(chain, addresses.acl, params.owner);
  const initialized = { initialized: 1n, initializing: false };
  await setInitializableStorage(chain, addresses.kmsVerifier, initialized);
  await setInitializableStorage(chain, addresses.inputVerifier, initialized);

  const kmsSigner = new Wallet(params.signers.kmsSignerKey).address as Address;
  const coprocessorSigner = new Wallet(params.signers.coprocessorSignerKey).address as Address;
  await params.sendAsOwner({
    to: addresses.kmsVerifier,
    data: encodeFunctionData({
      abi: hostArtifact('KMSVerifier').abi,
      functionName: 'initializeFromEmptyProxy',
      args: [GATEWAY.decryptionAddress, BigInt(GATEWAY.chainId), [kmsSigner], 1n],
    }),
  });
  await params.sendAsOwner({
    to: addresses.inputVerifier,
    data: encodeFunctionData({
      abi: hostArtifact('InputVerifier').abi,
      functionName: 'initializeFromEmptyProxy',
      args: [GATEWAY.inputVerificationAddress, BigInt(GATEWAY.chainId), [coprocessorSigner], 1n],
    }),
  });
  return addresses;
}
