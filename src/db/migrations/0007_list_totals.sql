CREATE TABLE "list_totals" (
	"list" text NOT NULL,
	"user_id" text NOT NULL,
	"key" jsonb NOT NULL,
	"slot" smallint NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "list_totals_pkey" PRIMARY KEY("list","user_id","key","slot")
);
--> statement-breakpoint
DROP INDEX "transactions_wallet_idx";--> statement-breakpoint
DROP INDEX "transactions_user_created_idx";--> statement-breakpoint
DROP INDEX "letters_user_created_idx";--> statement-breakpoint
CREATE INDEX "transactions_wallet_created_idx" ON "transactions" USING btree ("wallet_id","created_at","id");--> statement-breakpoint
CREATE INDEX "transactions_user_status_created_idx" ON "transactions" USING btree ("user_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "transactions_user_created_idx" ON "transactions" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "letters_user_created_idx" ON "letters" USING btree ("user_id","created_at","id");--> statement-breakpoint
-- The filter values a transaction is counted under: the list's filters. Adding a filter is one more pair here
-- (CREATE OR REPLACE in a later migration), then SELECT recount_list_totals('transactions', 'transactions', 'transaction_total_key').
CREATE FUNCTION transaction_total_key(t transactions) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('walletId', t.wallet_id, 'type', t.type, 'status', t.status, 'direction', t.direction)
$$;--> statement-breakpoint
CREATE FUNCTION letter_total_key(l letters) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('status', l.status)
$$;--> statement-breakpoint
-- One of eight counter rows per key, by the counted row's id: concurrent moves of different rows rarely share one.
CREATE FUNCTION list_total_slot(id text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
  SELECT (hashtext(id) & 7)::smallint
$$;--> statement-breakpoint
-- A row moved from one key to another: -1 and +1, taken in one order (user, key, slot) by every mover, so two
-- concurrent moves never wait on each other in a circle.
CREATE FUNCTION move_list_total(
  p_list text, p_old_user text, p_old_key jsonb, p_old_slot smallint,
  p_new_user text, p_new_key jsonb, p_new_slot smallint
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  old_first boolean := (p_old_user, p_old_key::text, p_old_slot) < (p_new_user, p_new_key::text, p_new_slot);
BEGIN
  IF old_first THEN
    UPDATE list_totals SET n = n - 1
      WHERE list = p_list AND user_id = p_old_user AND key = p_old_key AND slot = p_old_slot;
  END IF;
  INSERT INTO list_totals (list, user_id, key, slot, n) VALUES (p_list, p_new_user, p_new_key, p_new_slot, 1)
    ON CONFLICT (list, user_id, key, slot) DO UPDATE SET n = list_totals.n + 1;
  IF NOT old_first THEN
    UPDATE list_totals SET n = n - 1
      WHERE list = p_list AND user_id = p_old_user AND key = p_old_key AND slot = p_old_slot;
  END IF;
END $$;--> statement-breakpoint
-- Inserts and deletes are counted per statement (one upsert per key, however many rows: seeding with
-- generate_series stays fast); a move per row, only when the row's key changed (lease updates cost nothing).
-- One function per list, in static SQL: planned once per connection (a generic function's EXECUTE, planned on
-- every call, doubled the cost of a status update on PGlite).
CREATE FUNCTION count_transaction_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO list_totals (list, user_id, key, slot, n)
    SELECT 'transactions', r.user_id, transaction_total_key(r), list_total_slot(r.id), count(*) FROM new_rows r
    GROUP BY 2, 3, 4 ORDER BY 2, transaction_total_key(r)::text, 4
    ON CONFLICT (list, user_id, key, slot) DO UPDATE SET n = list_totals.n + excluded.n;
  ELSE
    UPDATE list_totals t SET n = t.n - c.n FROM (
      SELECT r.user_id, transaction_total_key(r) AS key, list_total_slot(r.id) AS slot, count(*) AS n
      FROM old_rows r GROUP BY 1, 2, 3) c
    WHERE t.list = 'transactions' AND t.user_id = c.user_id AND t.key = c.key AND t.slot = c.slot;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION count_transaction_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM move_list_total('transactions', OLD.user_id, transaction_total_key(OLD), list_total_slot(OLD.id),
    NEW.user_id, transaction_total_key(NEW), list_total_slot(NEW.id));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION count_letter_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO list_totals (list, user_id, key, slot, n)
    SELECT 'letters', r.user_id, letter_total_key(r), list_total_slot(r.id), count(*) FROM new_rows r
    GROUP BY 2, 3, 4 ORDER BY 2, letter_total_key(r)::text, 4
    ON CONFLICT (list, user_id, key, slot) DO UPDATE SET n = list_totals.n + excluded.n;
  ELSE
    UPDATE list_totals t SET n = t.n - c.n FROM (
      SELECT r.user_id, letter_total_key(r) AS key, list_total_slot(r.id) AS slot, count(*) AS n
      FROM old_rows r GROUP BY 1, 2, 3) c
    WHERE t.list = 'letters' AND t.user_id = c.user_id AND t.key = c.key AND t.slot = c.slot;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION count_letter_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM move_list_total('letters', OLD.user_id, letter_total_key(OLD), list_total_slot(OLD.id),
    NEW.user_id, letter_total_key(NEW), list_total_slot(NEW.id));
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER transactions_count_inserts AFTER INSERT ON transactions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_transaction_rows();--> statement-breakpoint
CREATE TRIGGER transactions_count_deletes AFTER DELETE ON transactions REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_transaction_rows();--> statement-breakpoint
CREATE TRIGGER transactions_count_moves AFTER UPDATE ON transactions FOR EACH ROW
  WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.id IS DISTINCT FROM NEW.id
    OR transaction_total_key(OLD) IS DISTINCT FROM transaction_total_key(NEW))
  EXECUTE FUNCTION count_transaction_move();--> statement-breakpoint
CREATE TRIGGER letters_count_inserts AFTER INSERT ON letters REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_letter_rows();--> statement-breakpoint
CREATE TRIGGER letters_count_deletes AFTER DELETE ON letters REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_letter_rows();--> statement-breakpoint
CREATE TRIGGER letters_count_moves AFTER UPDATE ON letters FOR EACH ROW
  WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.id IS DISTINCT FROM NEW.id
    OR letter_total_key(OLD) IS DISTINCT FROM letter_total_key(NEW))
  EXECUTE FUNCTION count_letter_move();--> statement-breakpoint
-- Recounts a list from its table's rows (the backfill below; after a change of its key function). Writers wait.
CREATE FUNCTION recount_list_totals(p_list text, p_table text, p_key text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('LOCK TABLE %I IN SHARE MODE', p_table);
  DELETE FROM list_totals WHERE list = p_list;
  EXECUTE format(
    'INSERT INTO list_totals (list, user_id, key, slot, n)
     SELECT %L, r.user_id, %I(r), list_total_slot(r.id), count(*) FROM %I r GROUP BY 2, 3, 4',
    p_list, p_key, p_table);
END $$;--> statement-breakpoint
SELECT recount_list_totals('transactions', 'transactions', 'transaction_total_key');--> statement-breakpoint
SELECT recount_list_totals('letters', 'letters', 'letter_total_key');
