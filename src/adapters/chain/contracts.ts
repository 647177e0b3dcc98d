/**
 * Our contracts (the three of `CONTRACT_NAMES` and the TransferBatcher): names, compiled artifacts (from `build/contracts`, written by scripts/build.ts) and typed ABIs.
 *
 * The typed ABIs below (`stablecoinAbi`, `confidentialTokenAbi`, `letterVaultAbi`) are the parts the service calls,
 * written with viem's `parseAbi` so that `readContract`/`encodeFunctionData` are type-checked; a test checks that
 * each of their entries exists in the compiled ABI. `loadArtifact(name)` gives the full compiled ABI and bytecode.
 *
 * FHE types in ABIs: `euint64` and `externalEuint64` are bytes32 handles.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Abi, erc20Abi, type Hex, parseAbi } from 'viem';

/** sealpay's contracts by role, as named in `build/contracts` (the artifact file names). */
export const CONTRACT_NAMES = {
  stablecoin: 'TestStablecoin',
  confidentialToken: 'ConfidentialStable',
  letterVault: 'LetterVault',
} as const;

/** Deployed beside the three, optional on real networks (see `Network.transferBatcher`). */
export const TRANSFER_BATCHER_CONTRACT = 'TransferBatcher';

/** The name of a contract this service deploys and loads an artifact for. */
export type ContractName =
  | (typeof CONTRACT_NAMES)[keyof typeof CONTRACT_NAMES]
  | typeof TRANSFER_BATCHER_CONTRACT;

/** The test stablecoin's symbol on the embedded network and devnet. */
export const STABLECOIN_SYMBOL = 'STABLE';
/** The confidential (ERC-7984) wrapper's symbol. */
export const CONFIDENTIAL_TOKEN_SYMBOL = 'cSTABLE';
/** Decimals of both tokens: amounts are bigint base units of 10^-6. */
export const TOKEN_DECIMALS = 6;

/**
 * A compiled contract as `build/contracts/*.json` holds it: enough to deploy it and to check a deployed
 * copy.
 */
export interface ContractArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

/** Where `npm run build:contracts` writes the artifacts (`build/contracts` at the repository root). */
export const BUILD_CONTRACTS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'build',
  'contracts',
);

const cache = new Map<ContractName, ContractArtifact>();

/** The compiled artifact (run `npm run build` first; `npm start`/`npm test` do). */
export function loadArtifact(name: ContractName): ContractArtifact {
  let artifact = cache.get(name);
  if (!artifact) {
    const file = path.join(BUILD_CONTRACTS_DIR, `${name}.json`);
    try {
      artifact = JSON.parse(readFileSync(file, 'utf8')) as ContractArtifact;
    } catch (error) {
      throw new Error(`Contract artifact ${file} is missing: run \`npm run build\``, { cause: error });
    }
    cache.set(name, artifact);
  }
  return artifact;
}

/** The public stablecoin (ERC-20, 6 decimals) with the operator's faucet mint. */
export const stablecoinAbi = [
  ...erc20Abi,
  ...parseAbi([
    'function mint(address to, uint256 amount)',
    'function owner() view returns (address)',
    'error OwnableUnauthorizedAccount(address account)',
  ]),
] as const;

/** cSTABLE: OpenZeppelin's ERC7984ERC20Wrapper. */
export const confidentialTokenAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function underlying() view returns (address)',
  'function rate() view returns (uint256)',
  'function confidentialBalanceOf(address account) view returns (bytes32)',
  'function confidentialTotalSupply() view returns (bytes32)',
  'function isOperator(address holder, address spender) view returns (bool)',
  'function setOperator(address operator, uint48 until)',
  'function wrap(address to, uint256 amount) returns (bytes32)',
  'function confidentialTransfer(address to, bytes32 encryptedAmount, bytes inputProof) returns (bytes32)',
  'function confidentialTransferAndCall(address to, bytes32 encryptedAmount, bytes inputProof, bytes data) returns (bytes32)',
  'function confidentialTransferFrom(address from, address to, bytes32 encryptedAmount, bytes inputProof) returns (bytes32)',
  'function unwrap(address from, address to, bytes32 encryptedAmount, bytes inputProof) returns (bytes32)',
  'function finalizeUnwrap(bytes32 unwrapRequestId, uint64 unwrapAmountCleartext, bytes decryptionProof)',
  'function unwrapRequester(bytes32 unwrapRequestId) view returns (address)',
  'event ConfidentialTransfer(address indexed from, address indexed to, bytes32 indexed amount)',
  'event UnwrapRequested(address indexed receiver, bytes32 indexed unwrapRequestId, bytes32 amount)',
  'event UnwrapFinalized(address indexed receiver, bytes32 indexed unwrapRequestId, bytes32 encryptedAmount, uint64 cleartextAmount)',
  'event OperatorSet(address indexed holder, address indexed operator, uint48 until)',
  'error ERC7984InvalidReceiver(address receiver)',
  'error ERC7984InvalidSender(address sender)',
  'error ERC7984UnauthorizedSpender(address holder, address spender)',
  'error ERC7984UnauthorizedUseOfEncryptedAmount(bytes32 amount, address user)',
  'error InvalidUnwrapRequest(bytes32 unwrapRequestId)',
]);

/** TransferBatcher: `batchTransfer(from[], to[], amounts[], proof)`, owner only; one `BatchLeg` per leg. */
export const transferBatcherAbi = parseAbi([
  'function token() view returns (address)',
  'function owner() view returns (address)',
  'function batchTransfer(address[] from, address[] to, bytes32[] amounts, bytes inputProof)',
  'event BatchLeg(uint256 indexed leg, address indexed from, address indexed to, bytes32 amount)',
  'error LengthMismatch()',
  'error OwnableUnauthorizedAccount(address account)',
]);

/** Letter states of LetterVault (`enum State`). */
export const LETTER_STATE = { None: 0, Escrowed: 1, Released: 2, Refunded: 3 } as const;

/** LetterVault: escrow by `confidentialTransferAndCall(vault, amount, proof, abi.encode(letterId))`. */
export const letterVaultAbi = parseAbi([
  'function token() view returns (address)',
  'function owner() view returns (address)',
  'function release(bytes32 letterId, address to) returns (bytes32)',
  'function refund(bytes32 letterId) returns (bytes32)',
  'function letterOf(bytes32 letterId) view returns (address sender, uint8 state, bytes32 amount)',
  'event LetterEscrowed(bytes32 indexed letterId, address indexed sender, bytes32 amount)',
  'event LetterReleased(bytes32 indexed letterId, address indexed to, bytes32 amount)',
  'event LetterRefunded(bytes32 indexed letterId, address indexed sender, bytes32 amount)',
  'error UnauthorizedToken(address caller)',
  'error InvalidLetterId()',
  'error LetterExists(bytes32 letterId)',
  'error LetterNotEscrowed(bytes32 letterId, uint8 state)',
  'error InvalidRecipient()',
  'error OwnableUnauthorizedAccount(address account)',
]);
