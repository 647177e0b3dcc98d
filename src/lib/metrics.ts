/**
 * The service's own counters, on `Deps` (one set per process, whichever roles it runs): `/metrics` shows them
 * beside the HTTP metrics of the app that serves it (src/http/metrics.ts).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface ServiceMetrics {
  readonly registry: Registry;
  /** Input proofs built (each is 20-30 s of client CPU with real FHE, whatever it carries). */
  readonly inputProofs: Counter;
  /** Encrypted amounts carried by those proofs. */
  readonly encryptedAmounts: Counter;
  /** Legs per confidential transfer batch sent (a lone transfer is not a batch). */
  readonly batchSize: Histogram;
  /**
   * Per JSON-RPC provider (`provider`: position in RPC_URL, `host`): requests by method, failures by reason
   * (`rate_limited`, `http_error`, `timeout`, `connection`), latency, and whether it is in line (0 while set aside).
   */
  readonly rpcRequests: Counter<'provider' | 'host' | 'method'>;
  readonly rpcErrors: Counter<'provider' | 'host' | 'reason'>;
  readonly rpcDuration: Histogram<'provider' | 'host'>;
  readonly rpcAvailable: Gauge<'provider' | 'host'>;
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
    rpcRequests: new Counter({
      name: 'sealpay_rpc_requests_total',
      help: 'JSON-RPC requests sent to each provider, by method (failed ones included)',
      labelNames: ['provider', 'host', 'method'] as const,
      registers: [registry],
    }),
    rpcErrors: new Counter({
      name: 'sealpay_rpc_errors_total',
      help: "JSON-RPC requests a provider failed (not a node's own error answer), by reason",
      labelNames: ['provider', 'host', 'reason'] as const,
      registers: [registry],
    }),
    rpcDuration: new Histogram({
      name: 'sealpay_rpc_request_duration_seconds',
      help: 'JSON-RPC request latency per provider',
      labelNames: ['provider', 'host'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    rpcAvailable: new Gauge({
      name: 'sealpay_rpc_provider_available',
      help: 'Whether a JSON-RPC provider is in line (1) or set aside after failing (0)',
      labelNames: ['provider', 'host'] as const,
      registers: [registry],
    }),
  };
}
