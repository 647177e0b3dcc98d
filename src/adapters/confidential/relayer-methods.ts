/**
 * The relayer methods `@fhevm/mock-utils` defines (`fhevm/relayer/methods.ts`) and `MockFhevmInstance` and
 * `@fhevm/hardhat-plugin` call over JSON-RPC. Only these are served to the outside; the debug methods that reveal
 * cleartexts (`fhevm_getClearText`, `fhevm_createDecryptionSignatures`) never are.
 * Kept free of imports so the JSON-RPC layer can use it without loading the mock.
 */
export const RELAYER_METHODS: ReadonlySet<string> = new Set([
  'fhevm_relayer_metadata',
  'fhevm_relayer_v1_input_proof',
  'fhevm_relayer_v1_user_decrypt',
  'fhevm_relayer_v1_delegated_user_decrypt',
  'fhevm_relayer_v1_public_decrypt',
]);

/** Whether `method` is one of the mock relayer's methods served to the outside (`RELAYER_METHODS`). */
export function isRelayerMethod(method: string): boolean {
  return RELAYER_METHODS.has(method);
}
