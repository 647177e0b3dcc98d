-- Money that leaves outside the API (issue 28): the chain follower records a transfer out of a wallet the service
-- knows that the service did not send, once per log and sending wallet, however often its blocks are read.
CREATE UNIQUE INDEX "transactions_outflow_log_key" ON "transactions" USING btree ("chain_id","tx_hash","log_index","wallet_id") WHERE "transactions"."direction" = 'out' AND "transactions"."step" = 'sent-outside';--> statement-breakpoint
-- The reconciliation (`sealpay reconcile`, and the worker every RECONCILE_INTERVAL_MINUTES): one row per job, taken
-- by one worker per interval (a guarded upsert on `started_at`), holding what the last run found for the gauges.
CREATE TABLE "operations_runs" (
	"name" text PRIMARY KEY NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"checked_at" timestamp (3) with time zone,
	"differences" integer,
	"operator_gas_days_left" double precision
);
