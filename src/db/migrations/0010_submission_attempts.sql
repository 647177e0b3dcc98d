-- Every signed attempt of a chain submission (issue 27): the first signature and each replacement (the same nonce,
-- `to`, `data` and `value` at a higher fee) is stored here before it is broadcast. `chain_submissions` keeps the
-- intent and its nonce; its `raw_tx`/`tx_hash` are the latest attempt's until one is mined, then the mined one's.
CREATE TABLE "chain_submission_attempts" (
	"id" text PRIMARY KEY NOT NULL,
	"submission_id" text NOT NULL,
	"raw_tx" text NOT NULL,
	"tx_hash" text NOT NULL,
	"sent_block" bigint,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_submission_attempts" ADD CONSTRAINT "chain_submission_attempts_submission_id_chain_submissions_id_fk" FOREIGN KEY ("submission_id") REFERENCES "public"."chain_submissions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_submission_attempts_hash_key" ON "chain_submission_attempts" USING btree ("tx_hash");--> statement-breakpoint
CREATE INDEX "chain_submission_attempts_submission_idx" ON "chain_submission_attempts" USING btree ("submission_id","created_at");--> statement-breakpoint
-- Submissions signed before: their one signature is their first attempt.
INSERT INTO "chain_submission_attempts" ("id", "submission_id", "raw_tx", "tx_hash", "created_at")
  SELECT 'att_' || "id", "id", "raw_tx", "tx_hash", "created_at" FROM "chain_submissions";
--> statement-breakpoint
-- The worker's finality check reads the submissions mined in the last blocks (a reorg deeper than CONFIRMATIONS).
CREATE INDEX "chain_submissions_block_idx" ON "chain_submissions" USING btree ("block_number") WHERE "chain_submissions"."block_number" is not null;
