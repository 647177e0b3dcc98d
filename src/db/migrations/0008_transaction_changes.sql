-- Which accounts' transactions a statement changed, as a notification per account on `sealpay_transaction_changes`
-- (payload: the user id), sent at commit. Only in a session that asks for it (`SET sealpay.notify_changes = 'on'`):
-- the embedded database's thread does, and its process's cache of list pages drops an account's pages when it
-- hears one (src/lib/page-cache.ts). On PostgreSQL nothing sets it, so nothing is sent.
CREATE FUNCTION notify_transaction_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('sealpay.notify_changes', true) = 'on' THEN
    PERFORM pg_notify('sealpay_transaction_changes', c.user_id) FROM (SELECT DISTINCT user_id FROM changed_rows) c;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER transactions_notify_inserts AFTER INSERT ON transactions REFERENCING NEW TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION notify_transaction_changes();--> statement-breakpoint
CREATE TRIGGER transactions_notify_updates AFTER UPDATE ON transactions REFERENCING NEW TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION notify_transaction_changes();--> statement-breakpoint
CREATE TRIGGER transactions_notify_deletes AFTER DELETE ON transactions REFERENCING OLD TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION notify_transaction_changes();
