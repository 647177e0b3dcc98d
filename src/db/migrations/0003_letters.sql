CREATE TABLE "letters" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"sender_wallet_id" text NOT NULL,
	"sender_address" text NOT NULL,
	"status" text NOT NULL,
	"chain_id" integer NOT NULL,
	"amount_base_units" numeric(78, 0) NOT NULL,
	"memo_sealed" text,
	"recipient_name" text NOT NULL,
	"recipient_address" jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"claim_origin" text NOT NULL,
	"claim_code_hash" text NOT NULL,
	"claim_code_sealed" text,
	"vault_letter_id" text NOT NULL,
	"escrow_transaction_id" text,
	"claim_transaction_id" text,
	"refund_transaction_id" text,
	"refund_reason" text,
	"claimable_status" text,
	"claimant_user_id" text,
	"claimant_wallet_id" text,
	"claimant_address" text,
	"claimed_at" timestamp (3) with time zone,
	"mail" jsonb,
	"mail_attempts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"needs_review" boolean DEFAULT false NOT NULL,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_sender_wallet_id_wallets_id_fk" FOREIGN KEY ("sender_wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_escrow_transaction_id_transactions_id_fk" FOREIGN KEY ("escrow_transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_claim_transaction_id_transactions_id_fk" FOREIGN KEY ("claim_transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_refund_transaction_id_transactions_id_fk" FOREIGN KEY ("refund_transaction_id") REFERENCES "public"."transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_claimant_user_id_users_id_fk" FOREIGN KEY ("claimant_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "letters" ADD CONSTRAINT "letters_claimant_wallet_id_wallets_id_fk" FOREIGN KEY ("claimant_wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "letters_claim_code_hash_key" ON "letters" USING btree ("claim_code_hash");--> statement-breakpoint
CREATE INDEX "letters_user_created_idx" ON "letters" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "letters_expiry_idx" ON "letters" USING btree ("expires_at") WHERE "letters"."status" in ('ESCROWED', 'MAILED');