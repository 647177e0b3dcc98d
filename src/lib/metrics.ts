/**
 * The service's own counters, on `Deps` (one set per process, whichever roles it runs): `/metrics` shows them
 * beside the HTTP metrics of the app that serves it (src/http/metrics.ts).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the last reconciliation found (kept in the database: any process shows the run a worker made). */
export interface ReconcileFindings {
  checkedAt: Date | null;
  differences: number | null;
  /** Null: the operator spent no gas over the last 7 days. */
  operatorGasDaysLeft: number | null;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  /** Input proofs built (each is 20-30 s of client CPU with real FHE, whatever it carries). */
  readonly inputProofs: Counter;
  /** Encrypted amounts carried by those proofs. */
  readonly encryptedAmounts: Counter;
  /** Legs per confidential transfer batch sent (a lone transfer is not a batch). */
  readonly batchSize: Histogram;
  /** The worker's chain transactions (docs/ARCHITECTURE.md, "Fees, replacement and confirmations"). */
  readonly chain: {
    /** Replacements signed: the same nonce and call at higher fees. */
    readonly replacements: Counter;
    /** Broadcasts the node refused for their price alone (signed again higher, never FAILED). */
    readonly priceRefusals: Counter;
    /** Times a transaction had to wait at `MAX_FEE_PER_GAS_GWEI`: no higher replacement allowed. */
    readonly feeCapWaits: Counter;
    /** Attempts broadcast again because the provider no longer knew them (dropped from its pool). */
    readonly rebroadcasts: Counter;
    /** Mined transactions whose block was reorganized away before their confirmations. */
    readonly reorgs: Counter;
    /** Confirmed transactions whose block was reorganized away after their confirmations (deeper than them). */
    readonly deepReorgs: Counter;
  };
  /**
   * Per JSON-RPC provider (`provider`: position in RPC_URL, `host`): requests by method, failures by reason
   * (`rate_limited`, `http_error`, `timeout`, `connection`), latency, and whether it is in line (0 while set aside).
   */
  readonly rpcRequests: Counter<'provider' | 'host' | 'method'>;
  readonly rpcErrors: Counter<'provider' | 'host' | 'reason'>;
  readonly rpcDuration: Histogram<'provider' | 'host'>;
  readonly rpcAvailable: Gauge<'provider' | 'host'>;
}

/**
 * The process's counters; with `lastReconcile`, the reconciliation's gauges too, read from it at each scrape (NaN
 * before the first run).
 */
export function createServiceMetrics(
  lastReconcile?: () => Promise<ReconcileFindings | null>,
): ServiceMetrics {
  const registry = new Registry();
  if (lastReconcile) reconcileGauges(registry, lastReconcile);
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
    chain: {
      replacements: new Counter({
        name: 'sealpay_chain_replacements_total',
        help: 'Chain transactions replaced at the same nonce with higher fees (stuck or refused for their price)',
        registers: [registry],
      }),
      priceRefusals: new Counter({
        name: 'sealpay_chain_price_refusals_total',
        help: 'Broadcasts refused for their price alone (fee cap below the base fee, underpriced): signed again higher',
        registers: [registry],
      }),
      feeCapWaits: new Counter({
        name: 'sealpay_chain_fee_cap_waits_total',
        help: 'Times a transaction needed a replacement above MAX_FEE_PER_GAS_GWEI and waits at the cap instead',
        registers: [registry],
      }),
      rebroadcasts: new Counter({
        name: 'sealpay_chain_rebroadcasts_total',
        help: 'Pending transactions the provider no longer knew (dropped), broadcast again',
        registers: [registry],
      }),
      reorgs: new Counter({
        name: 'sealpay_chain_reorgs_total',
        help: 'Mined transactions whose block was reorganized away before they had CONFIRMATIONS blocks',
        registers: [registry],
      }),
      deepReorgs: new Counter({
        name: 'sealpay_chain_deep_reorgs_total',
        help: 'Confirmed transactions whose block was reorganized away after CONFIRMATIONS blocks (needs review)',
        registers: [registry],
      }),
    },
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

function reconcileGauges(registry: Registry, lastReconcile: () => Promise<ReconcileFindings | null>): void {
  // One read per scrape, shared by the three gauges (prom-client collects them in turn).
  let pending: Promise<ReconcileFindings | null> | null = null;
  const findings = () => {
    pending ??= lastReconcile().finally(() => {
      pending = null;
    });
    return pending;
  };
  new Gauge({
    name: 'sealpay_reconcile_differences',
    help: 'Differences the last reconciliation found (wallets and assets, the letter vault, stuck transactions)',
    registers: [registry],
    async collect() {
      const found = await findings();
      this.set(found?.differences ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'sealpay_reconcile_last_run_timestamp_seconds',
    help: 'When the last reconciliation checked the ledger against the chain (unix seconds)',
    registers: [registry],
    async collect() {
      const found = await findings();
      this.set(found?.checkedAt ? found.checkedAt.getTime() / 1000 : Number.NaN);
    },
  });
  new Gauge({
    name: 'sealpay_operator_gas_days_left',
    help: "Days the operator's gas lasts at the last 7 days' spend (+Inf when it spent none)",
    registers: [registry],
    async collect() {
      const found = await findings();
      if (!found?.checkedAt) this.set(Number.NaN);
      else this.set(found.operatorGasDaysLeft ?? Number.POSITIVE_INFINITY);
    },
  });
}
