/**
 * Part `proofs`: what one input proof costs with the relayer SDK's real encryption (issue 18, item 1), offline.
 *
 * The SDK's own tools make the key material once: `createTfheKeypair()` (node-tfhe inside `@zama-fhe/relayer-sdk`
 * 0.4.1: the parameters of the networks' keys, `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128` with the
 * `V1_0_PARAM_PKE_…` compact public-key parameters, and a CRS of 2048 bits, `CompactPkeCrs.from_config(config,
 * 4 * 512)`). They take minutes, so the public key and the CRS are cached (serialized the way the relayer serves
 * them) under `$DATA_DIR/bench-proofs/` or `bench/.cache/`. Then, for 1, 4, 8, 16 and 32 `euint64` amounts in one
 * input, the SDK's builder (`TFHEZKProofBuilder`, the code behind `createEncryptedInput(...).add64(...).encrypt()`:
 * `CompactCiphertextList.builder(publicKey)`, `push_u64` per amount, `build_with_proof_packed(crs, metadata,
 * ZkComputeLoad.Verify)`) proves the input; the CPU time of that call is measured with `process.cpuUsage()`. An
 * instance's `encrypt()` then posts the proof to the relayer, whose verification is the coprocessors' cost, not
 * ours: that round trip is left out (it needs the network).
 *
 * node-tfhe runs single-threaded under Node (its thread pool is the browser build's), so CPU time ≈ wall time on
 * an idle core.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createTfheKeypair,
  SERIALIZED_SIZE_LIMIT_CRS,
  SERIALIZED_SIZE_LIMIT_PK,
  TFHEPkeParams,
  TFHEZKProofBuilder,
} from '@zama-fhe/relayer-sdk/node';

export const PROOF_SIZES = [1, 4, 8, 16, 32] as const;
/** The measured table, committed: `npm run bench -- batching` reads it when `proofs` is not run in the same call. */
export const PROOF_COSTS_FILE = new URL('./proof-costs.json', import.meta.url);

export interface ProofCost {
  amounts: number;
  cpuSeconds: number;
  wallSeconds: number;
  cpuSecondsPerAmount: number;
  proofBytes: number;
}

export interface ProofsResult {
  sdk: string;
  keyGeneration: { cached: boolean; cpuSeconds: number | null };
  costs: ProofCost[];
  notes: string[];
}

function cacheDir(): string {
  const dir = process.env.DATA_DIR
    ? join(process.env.DATA_DIR, 'bench-proofs')
    : new URL('./.cache/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  return dir;
}

function writeAtomically(path: string, bytes: Uint8Array): void {
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}

const cpuSecondsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};

/** The public key and CRS from the cache, made (minutes of CPU) and cached when absent. */
function loadKeyMaterial(): { pkeParams: TFHEPkeParams; cached: boolean; cpuSeconds: number | null } {
  const dir = cacheDir();
  const publicKeyFile = join(dir, 'public-key.bin');
  const crsFile = join(dir, 'crs-2048.bin');
  let cached = true;
  let cpuSeconds: number | null = null;
  if (!existsSync(publicKeyFile) || !existsSync(crsFile)) {
    cached = false;
    process.stderr.write(`bench: proofs: generating a TFHE key and a 2048-bit CRS (minutes) into ${dir}\n`);
    const start = process.cpuUsage();
    const { publicKey, crs } = createTfheKeypair();
    cpuSeconds = cpuSecondsSince(start);
    writeAtomically(publicKeyFile, publicKey.safe_serialize(SERIALIZED_SIZE_LIMIT_PK));
    writeAtomically(crsFile, crs.safe_serialize(SERIALIZED_SIZE_LIMIT_CRS));
  }
  const pkeParams = TFHEPkeParams.fromFhevmPkeConfig({
    publicKey: { id: 'local-bench', data: new Uint8Array(readFileSync(publicKeyFile)) },
    publicParams: {
      2048: { publicParamsId: 'local-bench-crs', publicParams: new Uint8Array(readFileSync(crsFile)) },
    },
  });
  return { pkeParams, cached, cpuSeconds };
}

// Any checksummed addresses: the proof binds them as metadata, their values do not change its cost.
const BINDING = {
  contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  userAddress: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  aclContractAddress: '0x50157CFfD6bBFA2DECe204a89ec419c23ef5755D',
  chainId: 11155111,
} as const;

export async function runProofsBench(): Promise<ProofsResult> {
  const { pkeParams, cached, cpuSeconds } = loadKeyMaterial();
  const costs: ProofCost[] = [];
  for (const amounts of PROOF_SIZES) {
    const builder = new TFHEZKProofBuilder({ pkeParams });
    for (let i = 0; i < amounts; i++) builder.addUint64(BigInt(1_000_000 + i));
    const wallStart = performance.now();
    const cpuStart = process.cpuUsage();
    const proof = builder.generateZKProof(BINDING);
    const cpu = cpuSecondsSince(cpuStart);
    const wall = (performance.now() - wallStart) / 1000;
    const cost: ProofCost = {
      amounts,
      cpuSeconds: round(cpu),
      wallSeconds: round(wall),
      cpuSecondsPerAmount: round(cpu / amounts),
      proofBytes: proof.ciphertextWithZKProof.length,
    };
    process.stderr.write(`bench: proofs: ${JSON.stringify(cost)}\n`);
    costs.push(cost);
  }
  const result: ProofsResult = {
    sdk: '@zama-fhe/relayer-sdk 0.4.1 (node-tfhe, single-threaded)',
    keyGeneration: { cached, cpuSeconds: cpuSeconds === null ? null : round(cpuSeconds) },
    costs,
    notes: [
      'one proof per row, run once (niced) on the shared 2-core machine; CPU seconds from process.cpuUsage()',
      'the relayer round trip of encrypt() (coprocessor verification) is not ours and is left out',
    ],
  };
  writeFileSync(PROOF_COSTS_FILE, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
