CREATE TABLE "address_nonces" (
	"address" text PRIMARY KEY NOT NULL,
	"next_nonce" bigint NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chain_submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"purpose" text NOT NULL,
	"from_address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"raw_tx" text NOT NULL,
	"tx_hash" text NOT NULL,
	"status" text NOT NULL,
	"block_number" bigint,
	"block_hash" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"chain_id" integer NOT NULL,
	"amount_base_units" numeric(78, 0) NOT NULL,
	"token" text NOT NULL,
	"tx_hash" text,
	"settlement_tx_hash" text,
	"from_address" text,
	"to_address" text,
	"counterparty" text,
	"error" text,
	"error_code" text,
	"metadata" jsonb,
	"step" text DEFAULT 'start' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp (3) with time zone,
	"idempotency_key" text,
	"request_hash" text,
	"block_number" bigint,
	"block_hash" text,
	"log_index" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"address" text NOT NULL,
	"type" text NOT NULL,
	"label" text NOT NULL,
	"is_primary" boolean DEFAULT false NOT NULL,
	"sealed_private_key" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_submissions" ADD CONSTRAINT "chain_submissions_transaction_id_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_submissions_purpose_key" ON "chain_submissions" USING btree ("transaction_id","purpose");--> statement-breakpoint
CREATE UNIQUE INDEX "chain_submissions_nonce_key" ON "chain_submissions" USING btree ("from_address","nonce");--> statement-breakpoint
CREATE UNIQUE INDEX "chain_submissions_hash_key" ON "chain_submissions" USING btree ("tx_hash");--> statement-breakpoint
CREATE INDEX "transactions_user_created_idx" ON "transactions" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "transactions_wallet_idx" ON "transactions" USING btree ("wallet_id");--> statement-breakpoint
CREATE INDEX "transactions_runnable_idx" ON "transactions" USING btree ("next_attempt_at") WHERE "transactions"."status" in ('QUEUED', 'PENDING', 'SETTLING');--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_idempotency_key" ON "transactions" USING btree ("user_id","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "wallets_address_key" ON "wallets" USING btree (lower("address"));--> statement-breakpoint
CREATE INDEX "wallets_user_idx" ON "wallets" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "wallets_one_primary_key" ON "wallets" USING btree ("user_id") WHERE "wallets"."is_primary";