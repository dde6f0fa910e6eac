-- The dispatcher: notifications (one per event and recipient), deliveries (one per
-- notification and device) with their leases, every delivery attempt, and provider pauses.
--
-- Fan-out runs in a tenant's scope (herald_app, row-level security). Claiming and
-- acknowledging deliveries works across tenants, so it runs as herald_dispatcher, a role
-- whose policies let it see the queue tables of every tenant and nothing else.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'herald_dispatcher') THEN
        CREATE ROLE herald_dispatcher NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'herald_dispatcher', 'MEMBER') THEN
        EXECUTE format('GRANT herald_dispatcher TO %I', current_user);
    END IF;
END
$$;

-- Fan-out state of an event: leased while a worker works on it, stamped when done.
ALTER TABLE outbox
    ADD COLUMN fanned_out_at timestamptz,
    ADD COLUMN lease_owner text,
    ADD COLUMN lease_expires_at timestamptz;
CREATE INDEX outbox_pending ON outbox (tenant_id, seq) WHERE fanned_out_at IS NULL;

CREATE TABLE notifications (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    event_id uuid NOT NULL,
    kind text NOT NULL,
    recipient_id uuid NOT NULL,
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    team_id uuid,
    activity_id uuid,
    conversation_id uuid,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb NOT NULL,
    badge integer NOT NULL,
    sound boolean NOT NULL,
    thread_id text NOT NULL,
    image_url text,
    -- queued: it has deliveries (their states say the rest); no_device and suppressed: it
    -- has none, and reason says why.
    status text NOT NULL CHECK (status IN ('queued', 'no_device', 'suppressed')),
    reason text,
    event_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT notifications_once UNIQUE (tenant_id, event_id, recipient_id),
    FOREIGN KEY (tenant_id, event_id) REFERENCES outbox (tenant_id, id),
    FOREIGN KEY (tenant_id, recipient_id) REFERENCES people (tenant_id, id)
);
CREATE INDEX notifications_created ON notifications (tenant_id, created_at);
CREATE INDEX notifications_recipient ON notifications (tenant_id, recipient_id, created_at);
CREATE INDEX notifications_activity ON notifications (tenant_id, activity_id) WHERE activity_id IS NOT NULL;

CREATE TABLE deliveries (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    notification_id uuid NOT NULL,
    device_id uuid NOT NULL,
    provider text NOT NULL CHECK (provider IN ('fcm', 'apns')),
    status text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'sending', 'sent', 'dead_token', 'failed', 'expired', 'cancelled')),
    attempts integer NOT NULL DEFAULT 0,
    due_at timestamptz NOT NULL DEFAULT now(),
    deadline_at timestamptz NOT NULL,
    first_attempt_at timestamptz,
    lease_owner text,
    lease_expires_at timestamptz,
    http_status integer,
    message_id text,
    last_error text,
    sent_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT deliveries_once UNIQUE (tenant_id, notification_id, device_id),
    FOREIGN KEY (tenant_id, notification_id) REFERENCES notifications (tenant_id, id),
    FOREIGN KEY (tenant_id, device_id) REFERENCES devices (tenant_id, id),
    CHECK ((status = 'sending') = (lease_owner IS NOT NULL))
);
CREATE INDEX deliveries_due ON deliveries (tenant_id, due_at) WHERE status = 'queued';
CREATE INDEX deliveries_leased ON deliveries (lease_expires_at) WHERE status = 'sending';
CREATE INDEX deliveries_sent ON deliveries (tenant_id, sent_at) WHERE status = 'sent';

CREATE TABLE delivery_attempts (
    tenant_id uuid NOT NULL,
    id uuid NOT NULL,
    delivery_id uuid NOT NULL,
    attempt integer NOT NULL,
    worker text NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    outcome text NOT NULL
        CHECK (outcome IN ('delivered', 'retry', 'dead_token', 'bad_request', 'configuration_error', 'cancelled')),
    http_status integer,
    provider_error text,
    message_id text,
    next_attempt_at timestamptz,
    -- False when the worker had lost its lease by the time it acknowledged.
    counted boolean NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, delivery_id) REFERENCES deliveries (tenant_id, id)
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (tenant_id, delivery_id, attempt);

-- A provider whose configuration is wrong: workers stop sending to it until `until`, then
-- try again; the queued work waits. Not tenant data.
CREATE TABLE provider_pauses (
    provider text PRIMARY KEY CHECK (provider IN ('fcm', 'apns')),
    reason text NOT NULL,
    worker text NOT NULL,
    paused_at timestamptz NOT NULL DEFAULT now(),
    until timestamptz NOT NULL
);

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['notifications', 'deliveries', 'delivery_attempts'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
    -- The dispatcher's view across tenants: the queue and what it needs to send.
    FOREACH name IN ARRAY ARRAY['outbox', 'notifications', 'deliveries', 'delivery_attempts', 'devices'] LOOP
        EXECUTE format('CREATE POLICY dispatcher ON %I TO herald_dispatcher USING (true) WITH CHECK (true)', name);
    END LOOP;
END
$$;

GRANT SELECT ON tenants TO herald_dispatcher;
GRANT SELECT, UPDATE ON outbox TO herald_dispatcher;
GRANT SELECT ON notifications TO herald_dispatcher;
GRANT SELECT, UPDATE ON deliveries TO herald_dispatcher;
GRANT SELECT, INSERT ON delivery_attempts TO herald_dispatcher;
GRANT SELECT, UPDATE (deactivated_at, deactivation_reason, updated_at) ON devices TO herald_dispatcher;
GRANT SELECT, INSERT, UPDATE, DELETE ON provider_pauses TO herald_dispatcher;
GRANT SELECT ON provider_pauses TO herald_app;
GRANT EXECUTE ON FUNCTION herald_current_tenant() TO herald_dispatcher;

-- Each notification with the status its deliveries add up to: sent (at least one device
-- accepted it), pending, expired, dead_token, cancelled or failed; no_device and
-- suppressed come from the notification itself. Row-level security applies as the caller.
CREATE VIEW notification_outcomes WITH (security_invoker = true) AS
SELECT n.tenant_id, n.id, n.event_id, n.kind, n.recipient_id, n.app, n.team_id, n.activity_id, n.conversation_id,
       n.title, n.body, n.event_at, n.created_at,
       CASE WHEN n.status <> 'queued' THEN n.status
            WHEN a.sent > 0 THEN 'sent'
            WHEN a.pending > 0 THEN 'pending'
            WHEN a.expired > 0 THEN 'expired'
            WHEN a.dead = a.total THEN 'dead_token'
            WHEN a.cancelled = a.total THEN 'cancelled'
            ELSE 'failed' END AS status,
       coalesce(n.reason, a.problem) AS reason, a.total AS devices, a.sent AS devices_sent, a.sent_at
FROM notifications n
CROSS JOIN LATERAL (
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE d.status = 'sent')::int AS sent,
           count(*) FILTER (WHERE d.status IN ('queued', 'sending'))::int AS pending,
           count(*) FILTER (WHERE d.status = 'expired')::int AS expired,
           count(*) FILTER (WHERE d.status = 'dead_token')::int AS dead,
           count(*) FILTER (WHERE d.status = 'cancelled')::int AS cancelled,
           min(d.sent_at) AS sent_at,
           string_agg(DISTINCT d.status || ': ' || d.last_error, '; ')
               FILTER (WHERE d.status <> 'sent' AND d.last_error IS NOT NULL) AS problem
    FROM deliveries d WHERE d.tenant_id = n.tenant_id AND d.notification_id = n.id
) a;
GRANT SELECT ON notification_outcomes TO herald_app, herald_dispatcher;
