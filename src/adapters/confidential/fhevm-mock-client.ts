/**
 * A `MockFhevmInstance` over JSON-RPC: the client a dApp builds against `hardhat node` with Zama's plugin, and the
 * one `NETWORK=devnet` uses. The relayer methods (`fhevm_relayer_*`) and the chain are the same endpoint; the
 * verifiers' EIP-712 domains, signers and thresholds are read from the chain, so nothing here is a constant that
 * could disagree with it.
 */
import { MockFhevmInstance, contracts as mockContracts, relayer } from '@fhevm/mock-utils';
import { BrowserProvider, type Eip1193Provider, JsonRpcProvider } from 'ethers';
import { getAddress } from 'viem';

/**
 * Connects a `MockFhevmInstance` to the chain and relayer at `rpc` (a `sealpay devnet`, or `hardhat node` with
 * Zama's plugin; a URL, or an EIP-1193 provider such as the service's list of providers): the relayer's metadata and
 * the verifiers' domains, signers and thresholds are read from there.
 */
export async function createMockFhevmClient(rpc: string | Eip1193Provider): Promise<MockFhevmInstance> {
  // No polling and no cache: the mock reads ACL permissions right after a transaction is mined.
  const provider =
    typeof rpc === 'string'
      ? new JsonRpcProvider(rpc, undefined, {
          staticNetwork: true,
          cacheTimeout: -1,
          polling: false,
          batchMaxCount: 1,
        })
      : new BrowserProvider(rpc, undefined, { staticNetwork: true, cacheTimeout: -1, polling: false });
  const metadata = (await provider.send(relayer.RELAYER_METADATA, [])) as relayer.RelayerMetadata;
  relayer.assertIsRelayerMetadata(metadata);
  const chainId = Number((await provider.getNetwork()).chainId);
  const kmsVerifier = await mockContracts.KMSVerifier.create(
    provider,
    getAddress(metadata.KMSVerifierAddress),
  );
  const inputVerifier = await mockContracts.InputVerifier.create(
    provider,
    getAddress(metadata.InputVerifierAddress),
  );
  return MockFhevmInstance.create(
    provider,
    provider,
    {
      verifyingContractAddressDecryption: kmsVerifier.gatewayDecryptionAddress,
      verifyingContractAddressInputVerification: inputVerifier.gatewayInputVerificationAddress,
      kmsContractAddress: getAddress(metadata.KMSVerifierAddress),
      inputVerifierContractAddress: getAddress(metadata.InputVerifierAddress),
      aclContractAddress: getAddress(metadata.ACLAddress),
      chainId,
      gatewayChainId: Number(kmsVerifier.gatewayChainId),
    },
    {
      inputVerifierProperties: inputVerifier.inputVerifierProperties,
      kmsVerifierProperties: kmsVerifier.kmsVerifierProperties,
    },
  );
}
