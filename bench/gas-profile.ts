/**
 * Where a transaction's gas goes, by contract and function: `debug_traceTransaction` with geth's `callTracer` (anvil
 * answers it), each call frame's own gas (its `gasUsed` less its sub-calls'), added up by `Contract.function`. The
 * outermost frame's own gas includes the transaction's intrinsic cost (21,000 and calldata). Used by the
 * `publicchain` bench to show what a batched transfer still pays per leg against one sent alone. The outermost frame
 * is given the receipt's `gasUsed` (refunds applied, intrinsic cost included): anvil's tracer reports more for it
 * than the transaction's gas limit (1.16M for a transfer whose receipt says 385k and whose limit is 800k). The
 * sub-calls' figures are taken as the tracer reports them: they sum to less than the receipt, as they must.
 */
import { type Abi, type Address, decodeFunctionData, getAddress, type Hex, type PublicClient } from 'viem';

/** A contract the profile names, and the ABI its selectors are read with. */
export interface NamedContract {
  name: string;
  abi: Abi;
}

interface CallFrame {
  to?: Address;
  input?: Hex;
  gasUsed?: Hex;
  calls?: CallFrame[];
}

function functionOf(frame: CallFrame, contract: NamedContract | undefined): string {
  const input = frame.input ?? '0x';
  if (input.length < 10) return '(plain call)';
  if (contract) {
    try {
      return decodeFunctionData({ abi: contract.abi, data: input }).functionName;
    } catch {
      // A function the ABI here does not list: shown by its selector.
    }
  }
  return input.slice(0, 10);
}

/** Own gas per `Contract.function` of the transaction `hash` (contracts not in `named` are shown by address). */
export async function gasProfile(
  chain: PublicClient,
  hash: Hex,
  named: ReadonlyMap<Address, NamedContract>,
): Promise<Map<string, bigint>> {
  const root = (await chain.request({
    method: 'debug_traceTransaction' as never,
    params: [hash, { tracer: 'callTracer' }] as never,
  })) as CallFrame;
  const { gasUsed } = await chain.getTransactionReceipt({ hash });
  const parts = new Map<string, bigint>();
  const visit = (frame: CallFrame) => {
    const to = frame.to ? getAddress(frame.to) : undefined;
    const contract = to ? named.get(to) : undefined;
    const children = frame.calls ?? [];
    const used = frame === root ? gasUsed : BigInt(frame.gasUsed ?? '0x0');
    const own = used - children.reduce((sum, child) => sum + BigInt(child.gasUsed ?? '0x0'), 0n);
    const key = `${contract?.name ?? to ?? '(create)'}.${functionOf(frame, contract)}`;
    parts.set(key, (parts.get(key) ?? 0n) + own);
    for (const child of children) visit(child);
  };
  visit(root);
  return parts;
}
