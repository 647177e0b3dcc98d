/**
 * The mail adapter's entry point: `createPrintProvider(config)` picks Lob when `LOB_API_KEY` is set, the local
 * print sandbox when it is unset on `local` or `devnet`, and nothing otherwise (the mail route then answers
 * `503 mail_provider_not_configured`).
 */
import { createLobPrintProvider } from './lob.ts';
import { createLocalPrintSandbox } from './local.ts';
import type { PrintProvider, SenderAddress } from './types.ts';

export { createLobPrintProvider, LOB_BASE_URL, type LobPrintProviderOptions } from './lob.ts';
export { createLocalPrintSandbox, type LocalPrintSandboxOptions } from './local.ts';
export * from './types.ts';

/**
 * What `createPrintProvider` chooses from: Lob when a key is set, else the local sandbox on local networks.
 */
export interface PrintProviderOptions {
  network: 'local' | 'devnet' | 'sepolia' | 'mainnet';
  lobApiKey: string | null;
  /** The local sandbox keeps its letters under `{dataDir}/mail`. */
  dataDir: string;
  now?: () => Date;
  /** Lob's return address (or a saved `adr_…` id); without it Lob sends answer 503. */
  sender?: SenderAddress | string | null;
  /** Tests only: a local server speaking Lob's API. */
  lobBaseUrl?: string;
}

/**
 * The print provider of this deployment, chosen once at start: Lob when `lobApiKey` is set, else the local print
 * sandbox on the sandbox networks (`local`, `devnet`), else none (null: mailing answers
 * `503 mail_provider_not_configured`).
 * @example createPrintProvider({ network: 'local', lobApiKey: null, dataDir: './data' }) // the local sandbox
 */
export function createPrintProvider(options: PrintProviderOptions): PrintProvider | null {
  const lobApiKey = options.lobApiKey?.trim();
  if (lobApiKey) {
    return createLobPrintProvider({
      apiKey: lobApiKey,
      sender: options.sender ?? null,
      ...(options.lobBaseUrl ? { baseUrl: options.lobBaseUrl } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  }
  // Both sandboxes on this machine (the embedded network and the devnet) print to local files.
  if (options.network === 'local' || options.network === 'devnet') {
    return createLocalPrintSandbox({
      dataDir: options.dataDir,
      ...(options.now ? { now: options.now } : {}),
    });
  }
  return null;
}
