-- The sandbox's test clock (issue 31): an offset, in whole seconds, that only ever grows, added to the time of
-- every process of the deployment. One row; it stays 0 in production (the route that moves it answers 404 there).
CREATE TABLE "test_clock" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"offset_seconds" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "test_clock_single_row" CHECK ("test_clock"."id" = 1),
	CONSTRAINT "test_clock_offset_forward" CHECK ("test_clock"."offset_seconds" >= 0)
);--> statement-breakpoint
INSERT INTO "test_clock" ("id", "offset_seconds") VALUES (1, 0);--> statement-breakpoint
-- The service's time as the database sees it: what a column's default stamps a row with, so a row the code leaves
-- to its default (an event, a webhook delivery) is dated on the same clock as the ones it stamps itself.
CREATE OR REPLACE FUNCTION sealpay_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM test_clock WHERE id = 1), 0))
$$;--> statement-breakpoint
ALTER TABLE "address_nonces" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "chain_cursors" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "chain_submissions" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "chain_submissions" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "email_outbox" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "email_outbox" ALTER COLUMN "next_attempt_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "letters" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "letters" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "passkeys" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "password_resets" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "pending_totp_logins" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "sessions" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "next_attempt_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "users" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "users" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "wallets" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_attempts" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "next_attempt_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ALTER COLUMN "updated_at" SET DEFAULT sealpay_now();--> statement-breakpoint
ALTER TABLE "webhook_events" ALTER COLUMN "created_at" SET DEFAULT sealpay_now();
