-- Webhooks for the tenant's backend (DESIGN §18).
--
-- Events come from the live channel's durable feed (0027): whatever a live frame reports is
-- already a live_pending row written with its change, and what only webhooks are told of
-- (timers' events, what became of a notification, a dead token) is written there too, with
-- no audience, so no socket ever sees it. The webhook feeder (one at a time: an advisory
-- lock) reads the feed after its cursor and writes one message for each endpoint of the
-- row's tenant that subscribes to it (a disabled one too: its messages wait for it to be
-- enabled again, by a replay), moving the cursor in the same transaction: a committed
-- event becomes a message exactly once. Senders lease messages as the dispatcher leases
-- deliveries; every attempt is kept.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'herald_webhooks') THEN
        CREATE ROLE herald_webhooks NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'herald_webhooks', 'MEMBER') THEN
        EXECUTE format('GRANT herald_webhooks TO %I', current_user);
    END IF;
END
$$;

ALTER TABLE live_pending DROP CONSTRAINT live_pending_kind_check;
ALTER TABLE live_pending ADD CONSTRAINT live_pending_kind_check
    CHECK (kind IN ('message', 'receipt', 'conversation', 'activity', 'notification', 'outcome', 'device'));

CREATE TABLE webhook_endpoints (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    id uuid NOT NULL,
    url text NOT NULL CHECK (length(url) <= 2048),
    -- Subscription patterns (`activity.*`, `message.created`, `*`), checked when written.
    events text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 50),
    description text CHECK (length(description) <= 1000),
    -- `whsec_…`: needed whole to sign, so kept whole; shown to no one after it is made.
    secret text NOT NULL,
    -- The secret before the last rotation, signed with too until previous_until.
    previous_secret text,
    previous_until timestamptz,
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
    disabled_reason text,
    disabled_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CHECK ((state = 'disabled') = (disabled_reason IS NOT NULL)),
    CHECK ((previous_secret IS NULL) = (previous_until IS NULL))
);

-- One event for one endpoint: its queue entry and its record. `id` is the event's (the
-- `webhook-id`, the same for every endpoint and every attempt); `body` is what is signed.
CREATE TABLE webhook_messages (
    tenant_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    id uuid NOT NULL,
    type text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sending', 'delivered', 'failed', 'cancelled')),
    attempts int NOT NULL DEFAULT 0,
    due_at timestamptz NOT NULL DEFAULT now(),
    lease_owner text,
    lease_expires_at timestamptz,
    settled_at timestamptz,
    PRIMARY KEY (tenant_id, endpoint_id, id),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE RESTRICT,
    CHECK ((status = 'sending') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
);
-- The claim walks each active endpoint's due messages and counts its leased ones (at most 10).
CREATE INDEX webhook_messages_due ON webhook_messages (tenant_id, endpoint_id, due_at) WHERE status = 'queued';
CREATE INDEX webhook_messages_leased ON webhook_messages (tenant_id, endpoint_id, lease_expires_at) WHERE status = 'sending';
CREATE INDEX webhook_messages_created ON webhook_messages (tenant_id, endpoint_id, created_at);
CREATE INDEX webhook_messages_settled ON webhook_messages (settled_at) WHERE settled_at IS NOT NULL;

CREATE TABLE webhook_attempts (
    tenant_id uuid NOT NULL,
    endpoint_id uuid NOT NULL,
    id uuid NOT NULL,
    message_id uuid NOT NULL,
    type text NOT NULL,
    attempt int NOT NULL,
    http_status int,
    error text,
    -- The first 1 KiB of the answer.
    response text,
    duration_ms int NOT NULL,
    worker text NOT NULL,
    at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, endpoint_id, id),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE RESTRICT
);
CREATE INDEX webhook_attempts_recent ON webhook_attempts (tenant_id, endpoint_id, at DESC);
CREATE INDEX webhook_attempts_at ON webhook_attempts (at);

-- How far the feeder has read the feed. A reference table: the feed is numbered across tenants.
CREATE TABLE webhook_cursor (
    id int PRIMARY KEY CHECK (id = 1),
    position bigint NOT NULL
);
INSERT INTO webhook_cursor (id, position) SELECT 1, coalesce(max(position), 0) FROM live_feed;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['webhook_endpoints', 'webhook_messages', 'webhook_attempts'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('CREATE POLICY webhooks ON %I TO herald_webhooks USING (true) WITH CHECK (true)', name);
    END LOOP;
END
$$;

GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO herald_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_messages TO herald_app;
GRANT SELECT, DELETE ON webhook_attempts TO herald_app;
GRANT SELECT, UPDATE (state, disabled_reason, disabled_at, updated_at) ON webhook_endpoints TO herald_webhooks;
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_messages TO herald_webhooks;
GRANT SELECT, INSERT, DELETE ON webhook_attempts TO herald_webhooks;
GRANT SELECT, UPDATE ON webhook_cursor TO herald_webhooks;
GRANT SELECT ON webhook_cursor TO herald_live;
CREATE POLICY webhooks ON live_feed TO herald_webhooks USING (true);
GRANT SELECT ON live_feed TO herald_webhooks;
GRANT EXECUTE ON FUNCTION herald_current_tenant() TO herald_webhooks;

-- The dispatcher writes what became of a notification, and dead tokens, as feed rows for
-- tenants with an endpoint (it asks whether one has any: the primary key answers).
CREATE POLICY dispatcher ON webhook_endpoints TO herald_dispatcher USING (true);
GRANT SELECT (tenant_id, id) ON webhook_endpoints TO herald_dispatcher;
CREATE POLICY dispatcher ON live_pending TO herald_dispatcher USING (true) WITH CHECK (true);
GRANT INSERT ON live_pending TO herald_dispatcher;
