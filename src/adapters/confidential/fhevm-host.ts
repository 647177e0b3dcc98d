/**
 * The fhEVM host contracts on the embedded chain, laid out and initialized as `@fhevm/hardhat-plugin` 0.4.x sets them
 * up on a Hardhat chain, so that its setup on `--network localhost` finds them as it would on `hardhat node`: the
 * contracts of `@fhevm/host-contracts` (FHEVMExecutor, ACL, KMSVerifier, InputVerifier, HCULimit) placed with
 * `hardhat_setCode` at the addresses `@fhevm/solidity`'s ZamaConfig uses for chain 31337, the ACL owned by
 * `0x…01`, the two verifiers initialized by that owner with the plugin's mock KMS signer and mock coprocessor signer,
 * and a second KMSVerifier at the address the plugin compiles into dApps (see `HARDHAT_PLUGIN_MOCK`).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setInitializableStorage, setOwnableStorage } from '@fhevm/mock-utils';
import { SepoliaConfig } from '@zama-fhe/relayer-sdk/node';
import { Wallet } from 'ethers';
import {
  type Abi,
  type Address,
  decodeFunctionResult,
  encodeFunctionData,
  getAddress,
  type Hex,
  parseEther,
} from 'viem';
import type { Eip1193 } from '../chain/evm.ts';

const require = createRequire(import.meta.url);

/** `ZamaConfig._getLocalConfig()` of `@fhevm/solidity` 0.11.1 (chain 31337). */
export const LOCAL_FHEVM_CONFIG = {
  ACLAddress: '0x50157CFfD6bBFA2DECe204a89ec419c23ef5755D',
  CoprocessorAddress: '0xe3a9105a3a932253A70F126eb1E3b589C643dD24',
  KMSVerifierAddress: '0x901F8942346f7AB3a01F6D7613119Bca447Bb030',
} as const satisfies Record<string, Address>;

/**
 * What `@fhevm/hardhat-plugin` 0.4.2 sets up on a Hardhat chain and checks on a chain it finds already set up
 * (`internal/constants.ts`, `internal/deploy/setup.ts`, `internal/FhevmEnvironment.ts` of the plugin):
 * - the ACL's owner is `0x…01` (the plugin impersonates it to initialize the verifiers);
 * - one mock KMS signer and one mock coprocessor signer, the plugin's public development keys (a mock chain holds
 *   no secret: values are in clear in the mock, as on `hardhat node`);
 * - its generated ZamaConfig.sol compiles, for chain 31337, the ACL and FHEVMExecutor of `@fhevm/host-contracts` and
 *   Sepolia's KMSVerifier address (`_initializeAddressesMock`), so a dApp built by the plugin verifies public
 *   decryption proofs (`FHE.checkSignatures`) against a KMSVerifier there. Contracts compiled against
 *   `@fhevm/solidity`'s own ZamaConfig (sealpay's, Foundry projects) use `LOCAL_FHEVM_CONFIG.KMSVerifierAddress`:
 *   both addresses hold a KMSVerifier with the same signers and EIP-712 domain, so a proof valid for one is valid
 *   for the other.
 * `src/adapters/confidential/hardhat-plugin.test.ts` checks these against the installed plugin's own constants.
 */
export const HARDHAT_PLUGIN_MOCK = {
  aclOwner: '0x0000000000000000000000000000000000000001',
  /** The balance the plugin gives the ACL owner when it impersonates it (it pays for the verifiers' setup). */
  aclOwnerBalance: parseEther('10000'),
  kmsVerifierAddress: getAddress(SepoliaConfig.kmsContractAddress),
  signers: {
    kmsSignerKey: '0x388b7680e4e1afa06efbfd45cdd1fe39f3c6af381df6555a19661f283b97de91',
    coprocessorSignerKey: '0x7ec8ada6642fc4ccfb7729bc29c17cf8d21b61abd5642d1db992c0b8672ab901',
  },
  kmsThreshold: 1n,
  inputVerifierThreshold: 1n,
} as const satisfies {
  aclOwner: Address;
  aclOwnerBalance: bigint;
  kmsVerifierAddress: Address;
  signers: MockSignerKeys;
  kmsThreshold: bigint;
  inputVerifierThreshold: bigint;
};

type HostContractName = 'FHEVMExecutor' | 'ACL' | 'KMSVerifier' | 'InputVerifier' | 'HCULimit';

interface HostArtifact {
  abi: Abi;
  deployedBytecode: Hex;
}

const artifactCache = new Map<HostContractName, HostArtifact>();

/** The ABI and deployed bytecode of an fhEVM host contract, read once from `@fhevm/host-contracts`. */
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

/**
 * The KMS and coprocessor signer keys of the mock: local networks only, they sign its decryptions and input
 * proofs.
 */
export interface MockSignerKeys {
  kmsSignerKey: Hex;
  coprocessorSignerKey: Hex;
}

/**
 * Where the fhEVM host contracts are on a chain (ACL, executor, verifiers), as the mock and the relayer
 * need them.
 */
export interface HostAddresses {
  acl: Address;
  executor: Address;
  /**
   * The KMSVerifier dApps are told of (`fhevm_relayer_metadata`) and the mock reads its signers from: the one at
   * `HARDHAT_PLUGIN_MOCK.kmsVerifierAddress` on chains set up since, the ZamaConfig one on chains set up before.
   */
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

async function hasCode(chain: Eip1193, address: Address): Promise<boolean> {
  return ((await chain.request({ method: 'eth_getCode', params: [address, 'latest'] })) as Hex) !== '0x';
}

/** The addresses the executor's bytecode was compiled with (InputVerifier and HCULimit are not in ZamaConfig). */
export async function resolveHostAddresses(chain: Eip1193): Promise<HostAddresses> {
  const executor = hostArtifact('FHEVMExecutor');
  const at = LOCAL_FHEVM_CONFIG.CoprocessorAddress;
  if (!(await hasCode(chain, at))) throw new Error('fhEVM host contracts are not deployed');
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
    kmsVerifier: (await hasCode(chain, HARDHAT_PLUGIN_MOCK.kmsVerifierAddress))
      ? HARDHAT_PLUGIN_MOCK.kmsVerifierAddress
      : LOCAL_FHEVM_CONFIG.KMSVerifierAddress,
    inputVerifier: getAddress(inputVerifier),
    hcuLimit: getAddress(hcuLimit),
  };
}

/**
 * Sends a transaction from the ACL owner, as the plugin does (`0x…01` impersonated: nobody holds its key), and
 * checks that it succeeded. The journaled chain mines it before answering.
 */
async function sendAsAclOwner(chain: Eip1193, to: Address, data: Hex): Promise<void> {
  const hash = (await chain.request({
    method: 'eth_sendTransaction',
    params: [{ from: HARDHAT_PLUGIN_MOCK.aclOwner, to, data }],
  })) as Hex;
  const receipt = (await chain.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as {
    status: Hex;
  } | null;
  if (receipt?.status !== '0x1') throw new Error(`The ACL owner's call to ${to} failed (${hash})`);
}

/**
 * Places and initializes the host contracts on a new chain (every call goes through the journaled chain), as
 * `@fhevm/hardhat-plugin` does on Hardhat: see `HARDHAT_PLUGIN_MOCK`.
 */
export async function deployFhevmHost(
  chain: Eip1193,
  params: { signers: MockSignerKeys },
): Promise<HostAddresses> {
  const setCode = (address: Address, name: HostContractName) =>
    chain.request({ method: 'hardhat_setCode', params: [address, hostArtifact(name).deployedBytecode] });
  await setCode(LOCAL_FHEVM_CONFIG.CoprocessorAddress, 'FHEVMExecutor');
  const precompiled = await resolveHostAddresses(chain);
  const kmsVerifiers = [LOCAL_FHEVM_CONFIG.KMSVerifierAddress, HARDHAT_PLUGIN_MOCK.kmsVerifierAddress];
  await setCode(precompiled.acl, 'ACL');
  for (const address of kmsVerifiers) await setCode(address, 'KMSVerifier');
  await setCode(precompiled.inputVerifier, 'InputVerifier');
  await setCode(precompiled.hcuLimit, 'HCULimit');

  const owner = HARDHAT_PLUGIN_MOCK.aclOwner;
  await setOwnableStorage(chain, precompiled.acl, owner);
  const initialized = { initialized: 1n, initializing: false };
  for (const address of [...kmsVerifiers, precompiled.inputVerifier]) {
    await setInitializableStorage(chain, address, initialized);
  }

  const kmsSigner = new Wallet(params.signers.kmsSignerKey).address as Address;
  const coprocessorSigner = new Wallet(params.signers.coprocessorSignerKey).address as Address;
  await chain.request({ method: 'hardhat_impersonateAccount', params: [owner] });
  await chain.request({
    method: 'hardhat_setBalance',
    params: [owner, `0x${HARDHAT_PLUGIN_MOCK.aclOwnerBalance.toString(16)}`],
  });
  for (const address of kmsVerifiers) {
    await sendAsAclOwner(
      chain,
      address,
      encodeFunctionData({
        abi: hostArtifact('KMSVerifier').abi,
        functionName: 'initializeFromEmptyProxy',
        args: [
          GATEWAY.decryptionAddress,
          BigInt(GATEWAY.chainId),
          [kmsSigner],
          HARDHAT_PLUGIN_MOCK.kmsThreshold,
        ],
      }),
    );
  }
  await sendAsAclOwner(
    chain,
    precompiled.inputVerifier,
    encodeFunctionData({
      abi: hostArtifact('InputVerifier').abi,
      functionName: 'initializeFromEmptyProxy',
      args: [
        GATEWAY.inputVerificationAddress,
        BigInt(GATEWAY.chainId),
        [coprocessorSigner],
        HARDHAT_PLUGIN_MOCK.inputVerifierThreshold,
      ],
    }),
  );
  await chain.request({ method: 'hardhat_stopImpersonatingAccount', params: [owner] });
  return resolveHostAddresses(chain);
}
