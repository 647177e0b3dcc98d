/**
 * Build step run by `npm start` (prestart) and `npm test` (pretest): compiles the Solidity contracts of
 * `contracts/` with solc-js (npm `solc`, never a downloaded compiler) into `build/contracts/<Name>.json`
 * (`{contractName, abi, bytecode, deployedBytecode}`).
 *
 * Incremental: a stamp (sha-256 over our sources, the compiler settings and the versions of the compiler and of
 * the Solidity packages imported from node_modules) is kept in `build/contracts/.stamp`; when it matches and every
 * artifact exists, the build is skipped, so a second start costs a few milliseconds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildWeb } from '../web/build.ts';

const require = createRequire(import.meta.url);

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CONTRACTS_DIR = path.join(PROJECT_ROOT, 'contracts');
export const BUILD_DIR = path.join(PROJECT_ROOT, 'build', 'contracts');

/** The contracts that are deployed (an artifact is written for each). */
export const DEPLOYABLE_CONTRACTS = [
  'TestStablecoin',
  'ConfidentialStable',
  'LetterVault',
  'TransferBatcher',
] as const;

const SOLIDITY_PACKAGES = [
  'solc',
  '@openzeppelin/contracts',
  '@openzeppelin/confidential-contracts',
  '@fhevm/solidity',
  'encrypted-types',
];

export const COMPILER_SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
} as const;

export interface ContractArtifact {
  contractName: string;
  sourceName: string;
  abi: unknown[];
  bytecode: `0x${string}`;
  deployedBytecode: `0x${string}`;
}

export interface BuildResult {
  compiled: boolean;
  durationMs: number;
  contracts: string[];
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<
      string,
      { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >;
}

function packageVersion(name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return 'absent';
  }
}

function listSources(): string[] {
  return readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith('.sol'))
    .sort();
}

/** The stamp of the current sources and settings; equal stamps mean equal artifacts. */
export function computeStamp(): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(COMPILER_SETTINGS));
  for (const pkg of SOLIDITY_PACKAGES) hash.update(`${pkg}@${packageVersion(pkg)}\n`);
  for (const file of listSources()) {
    hash.update(`${file}\n`);
    hash.update(readFileSync(path.join(CONTRACTS_DIR, file)));
  }
  return hash.digest('hex');
}

function stampPath(): string {
  return path.join(BUILD_DIR, '.stamp');
}

export function isBuildFresh(): boolean {
  if (!existsSync(stampPath())) return false;
  if (readFileSync(stampPath(), 'utf8').trim() !== computeStamp()) return false;
  return DEPLOYABLE_CONTRACTS.every((name) => existsSync(path.join(BUILD_DIR, `${name}.json`)));
}

function findImport(importPath: string): { contents: string } | { error: string } {
  const candidates = [
    path.join(CONTRACTS_DIR, importPath),
    path.join(PROJECT_ROOT, 'node_modules', importPath),
  ];
  for (const candidate of candidates) {
    if (existsSync(candidate)) return { contents: readFileSync(candidate, 'utf8') };
  }
  return { error: `File not found: ${importPath}` };
}

/** Compiles the contracts unless the stamp says the artifacts are current (`force` compiles anyway). */
export function buildContracts(options: { force?: boolean; log?: (line: string) => void } = {}): BuildResult {
  const started = performance.now();
  const log = options.log ?? (() => {});
  if (!options.force && isBuildFresh()) {
    return { compiled: false, durationMs: performance.now() - started, contracts: [...DEPLOYABLE_CONTRACTS] };
  }
  const solc = require('solc') as {
    compile(input: string, callbacks: { import: typeof findImport }): string;
  };
  const sources: Record<string, { content: string }> = {};
  for (const file of listSources()) {
    sources[file] = { content: readFileSync(path.join(CONTRACTS_DIR, file), 'utf8') };
  }
  log(`compiling ${Object.keys(sources).length} contract sources with solc ${packageVersion('solc')}`);
  const input = { language: 'Solidity', sources, settings: COMPILER_SETTINGS };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`Solidity compilation failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  mkdirSync(BUILD_DIR, { recursive: true });
  for (const name of DEPLOYABLE_CONTRACTS) {
    const sourceName = `${name}.sol`;
    const contract = output.contracts?.[sourceName]?.[name];
    if (!contract) throw new Error(`Solidity compilation produced no contract ${name}`);
    const artifact: ContractArtifact = {
      contractName: name,
      sourceName,
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    };
    const target = path.join(BUILD_DIR, `${name}.json`);
    writeFileSync(`${target}.tmp`, JSON.stringify(artifact, null, 2));
    renameSync(`${target}.tmp`, target);
  }
  writeFileSync(stampPath(), `${computeStamp()}\n`);
  const durationMs = performance.now() - started;
  log(`compiled ${DEPLOYABLE_CONTRACTS.join(', ')} in ${Math.round(durationMs)} ms`);
  return { compiled: true, durationMs, contracts: [...DEPLOYABLE_CONTRACTS] };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const force = process.argv.includes('--force');
  const result = buildContracts({ force, log: (line) => console.log(`[build] ${line}`) });
  if (!result.compiled) console.log(`[build] contracts up to date (${Math.round(result.durationMs)} ms)`);
  await buildWeb({ force });
}
