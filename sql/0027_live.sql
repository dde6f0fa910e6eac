-- The live channel (DESIGN §17): the feed of durable frames, presence, receipts, tickets.
--
-- A change that a live frame reports writes a row to live_pending in its own transaction.
-- The sequencer (any herald serve, one at a time: an advisory lock) moves committed pending
-- rows into live_feed, numbering them from one sequence as it goes. Positions therefore
-- become visible in increasing order, whatever order the writers commit in: a reader that has
-- seen position P has seen every position below it, and a client's cursor is a position.
-- Who may see a row is decided when it is read (the API's access rules), not when written.
--
-- live_pending and the sequencer read across tenants as herald_live, which sees these tables
-- and nothing else; the frames themselves are read in the tenant's scope (herald_app).

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'herald_live') THEN
        CREATE ROLE herald_live NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'herald_live', 'MEMBER') THEN
        EXECUTE format('GRANT herald_live TO %I', current_user);
    END IF;
END
$$;

-- Audience columns: person_id (one person's frames: notification), conversation_id (its
-- participants: message, receipt, conversation; about_person, the receipt's own person, is
-- left out), activity_id (those who may see the activity).
CREATE TABLE live_pending (
    tenant_id uuid NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL CHECK (kind IN ('message', 'receipt', 'conversation', 'activity', 'notification')),
    person_id uuid,
    conversation_id uuid,
    activity_id uuid,
    about_person uuid,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX live_pending_order ON live_pending (id);

CREATE SEQUENCE live_feed_position;

CREATE TABLE live_feed (
    tenant_id uuid NOT NULL,
    position bigint NOT NULL,
    kind text NOT NULL,
    person_id uuid,
    conversation_id uuid,
    activity_id uuid,
    about_person uuid,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    -- Positions come from one sequence: unique across tenants, though keyed per tenant.
    PRIMARY KEY (tenant_id, position)
);
CREATE INDEX live_feed_by_position ON live_feed (position);
CREATE INDEX live_feed_created ON live_feed (created_at);

-- One row per herald serve with the live channel, stamped every few seconds; a row not
-- stamped for 25 s is a server that died, and its people's presence goes with it. Not tenant
-- data: a reference table (DESIGN §10), like tenants.
CREATE TABLE live_servers (
    id uuid PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    seen_at timestamptz NOT NULL DEFAULT now()
);

-- Who has a socket that answers heartbeats, on which server.
CREATE TABLE live_presence (
    tenant_id uuid NOT NULL,
    person_id uuid NOT NULL,
    -- A live_servers row; removed with it by the reaper (no foreign key: that table is shared).
    server_id uuid NOT NULL,
    since timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, person_id, server_id)
);

-- Single-use tickets for browsers (they cannot set Authorization on a WebSocket): the
-- SHA-256 of the ticket, the credential and person it stands for, 30 s of validity.
CREATE TABLE live_tickets (
    tenant_id uuid NOT NULL,
    digest bytea NOT NULL,
    credential_id uuid NOT NULL,
    person_id uuid NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, digest)
);
-- Redeemed by the ticket alone (the tenant is not known yet).
CREATE INDEX live_tickets_digest ON live_tickets (digest);

ALTER TABLE people
    ADD COLUMN last_seen_at timestamptz,
    ADD COLUMN show_presence boolean NOT NULL DEFAULT true;

-- The highest message sequence this person's apps have received (over a socket, or said so).
ALTER TABLE conversation_participants ADD COLUMN last_received_seq bigint NOT NULL DEFAULT 0;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['live_pending', 'live_feed', 'live_presence', 'live_tickets'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('CREATE POLICY live ON %I TO herald_live USING (true) WITH CHECK (true)', name);
    END LOOP;
END
$$;

GRANT INSERT ON live_pending TO herald_app;
GRANT SELECT ON live_feed TO herald_app;
GRANT SELECT ON live_presence TO herald_app;
GRANT SELECT ON live_servers TO herald_app;
GRANT SELECT, INSERT, DELETE ON live_tickets TO herald_app;
GRANT SELECT, DELETE ON live_tickets TO herald_live;
GRANT SELECT, DELETE ON live_pending TO herald_live;
GRANT SELECT, INSERT, DELETE ON live_feed TO herald_live;
GRANT SELECT, INSERT, UPDATE, DELETE ON live_servers TO herald_live;
GRANT SELECT, INSERT, UPDATE, DELETE ON live_presence TO herald_live;
GRANT USAGE ON SEQUENCE live_feed_position TO herald_live;
GRANT EXECUTE ON FUNCTION herald_current_tenant() TO herald_live;

-- The presence reaper stamps when people of a dead server were last seen.
CREATE POLICY live ON people TO herald_live USING (true) WITH CHECK (true);
GRANT SELECT (tenant_id, id, email, show_presence, last_seen_at), UPDATE (last_seen_at) ON people TO herald_live;

-- How far the feed was pruned: a cursor below it gets resync. A reference table.
CREATE TABLE live_horizon (
    id int PRIMARY KEY CHECK (id = 1),
    pruned_through bigint NOT NULL
);
GRANT SELECT, INSERT, UPDATE ON live_horizon TO herald_live;

-- Devices whose app is in the foreground with a live socket (opened with device=TOKEN), on
-- which server: a chat push to such a device is skipped (reason live): the app shows it.
CREATE TABLE live_devices (
    tenant_id uuid NOT NULL,
    device_id uuid NOT NULL,
    server_id uuid NOT NULL,
    since timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, device_id, server_id)
);
ALTER TABLE live_devices ENABLE ROW LEVEL SECURITY;
ALTER TABLE live_devices FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON live_devices USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
CREATE POLICY live ON live_devices TO herald_live USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, DELETE ON live_devices TO herald_app;
GRANT SELECT, DELETE ON live_devices TO herald_live;
