-- Scoped API keys (issue 29): read-only keys, keys bound to some of the account's wallets, a rolling 24-hour spend
-- limit. A key without them (every key made before) keeps the whole account's reach.
ALTER TABLE "api_keys" ADD COLUMN "permissions" text DEFAULT 'full' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "wallet_ids" text[];--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "spend_limit_base_units" numeric(78, 0);--> statement-breakpoint
-- The key that created a transaction (null: a session, the worker, the follower): a key's spend is summed from it.
ALTER TABLE "transactions" ADD COLUMN "api_key_id" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "transactions_api_key_created_idx" ON "transactions" USING btree ("api_key_id","created_at") WHERE "transactions"."api_key_id" is not null;--> statement-breakpoint
-- Letters are counted per sending wallet too, so a key bound to some wallets reads its list's total without counting.
CREATE OR REPLACE FUNCTION letter_total_key(l letters) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('walletId', l.sender_wallet_id, 'status', l.status)
$$;--> statement-breakpoint
SELECT recount_list_totals('letters', 'letters', 'letter_total_key');
