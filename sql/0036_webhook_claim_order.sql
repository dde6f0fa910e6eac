-- The webhooks' claim takes each endpoint's next due messages in (due_at, id) order. The index
-- of 0030 held only due_at, so every claim sorted the endpoint's whole queue: with 5,000
-- messages queued, PostgreSQL spent 1.5 ms of CPU a message sent (herald bench webhooks).
-- With id in the index, a claim reads the few entries it takes.
CREATE INDEX webhook_messages_next ON webhook_messages (tenant_id, endpoint_id, due_at, id) WHERE status = 'queued';
DROP INDEX webhook_messages_due;
