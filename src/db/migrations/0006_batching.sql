ALTER TABLE "transactions" ADD COLUMN "batch_id" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "batch_leg" integer;--> statement-breakpoint
ALTER TABLE "wallets" ADD COLUMN "batcher_operator_until" bigint;--> statement-breakpoint
CREATE INDEX "transactions_batch_idx" ON "transactions" USING btree ("batch_id") WHERE "transactions"."batch_id" is not null;