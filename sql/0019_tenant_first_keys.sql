-- Every unique key starts with the tenant (DESIGN.md §10: the schema can be distributed on
-- tenant_id by Citus, which enforces a unique key only when it holds the distribution column).
--
-- The outbox's and the messages' sequence numbers come from one identity each and stay
-- unique by construction; the keys that said so become per tenant, which is how every
-- query reads them (always with the tenant).
ALTER TABLE outbox DROP CONSTRAINT outbox_seq_unique, ADD CONSTRAINT outbox_seq_unique UNIQUE (tenant_id, seq);
ALTER TABLE messages DROP CONSTRAINT messages_seq_unique, ADD CONSTRAINT messages_seq_unique UNIQUE (tenant_id, seq);

-- A console cookie names its session by id alone: finding it is one of the documented
-- cross-tenant lookups (like a credential by its prefix). Its id is unique within the
-- tenant by the primary key, and a random UUIDv7 across tenants.
DROP INDEX console_sessions_id;
CREATE INDEX console_sessions_by_id ON console_sessions (id);
