-- Issue 30: a webhook's `data` is rendered by the API's own mappers. A letter's view shows its leg transactions, so
-- its event keeps them as they were when the event was written, beside the letter's row.
ALTER TABLE "webhook_events" ADD COLUMN "related" jsonb DEFAULT '[]'::jsonb NOT NULL;
