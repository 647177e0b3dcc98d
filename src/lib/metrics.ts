/**
 * The service's own counters, on `Deps` (one set per process, whichever roles it runs): `/metrics` shows them
 * beside the HTTP metrics of the app that serves it (src/http/metrics.ts).
 */
import { Counter, Histogram, Registry } from 'prom-client';

export interface ServiceMetrics {
  readonly registry: Registry;
  /** Input proofs built (each is 20-30 s of client CPU with real FHE, whatever it carries). */
  readonly inputProofs: Counter;
  /** Encrypted amounts carried by those proofs. */
  readonly encryptedAmounts: Counter;
  /** Legs per confidential transfer batch sent (a lone transfer is not a batch). */
  readonly batchSize: Histogram;
}

export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry();
  return {
    registry,
    inputProofs: new Counter({
      name: 'sealpay_input_proofs_total',
      help: 'FHE input proofs built (one per encrypted input, whatever it carries)',
      registers: [registry],
    }),
    encryptedAmounts: new Counter({
      name: 'sealpay_encrypted_amounts_total',
      help: 'Encrypted amounts carried by input proofs',
      registers: [registry],
    }),
    batchSize: new Histogram({
      name: 'sealpay_transfer_batch_size',
      help: 'Legs per confidential transfer batch (one transaction, one input proof)',
      buckets: [2, 4, 8, 16, 24, 32],
      registers: [registry],
    }),
  };
}
