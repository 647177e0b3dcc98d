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
