-- Digests (docs/notifications.md): fewer pushes that say more.
--
-- A preference is now a mode: immediate (pushed as it happens), digest (gathered into the
-- person's digest) or off. `enabled` said immediate or off.
ALTER TABLE notification_preferences ADD COLUMN mode text CHECK (mode IN ('immediate', 'digest', 'off'));
UPDATE notification_preferences SET mode = CASE WHEN enabled THEN 'immediate' ELSE 'off' END;
ALTER TABLE notification_preferences ALTER COLUMN mode SET NOT NULL, DROP COLUMN enabled;

-- A person's setting for one conversation wins over their chat.message setting (NULL: none).
ALTER TABLE conversation_participants ADD COLUMN push_mode text CHECK (push_mode IN ('immediate', 'digest', 'off'));

-- How long a person's digest gathers: 1m, 5m, 15m, 1h, 4h, or daily HH:MM on their clock.
ALTER TABLE people ADD COLUMN digest_window text NOT NULL DEFAULT '1h';

-- One digest: what one person's app gathers from one team (activity events) or one
-- conversation (chat). Open from its first item until `closes_at` (its window's end, or now
-- once it holds 50 items: `due`); then a worker closes it in one transaction: the items
-- still worth telling are pushed as one notification (`notification_id`), or none is left
-- (`empty`). At most one is open per person, app and scope.
CREATE TABLE digests (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    id uuid NOT NULL,
    person_id uuid NOT NULL,
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    scope_id uuid NOT NULL,
    team_id uuid,
    conversation_id uuid,
    scope_name text NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'due', 'sent', 'empty')),
    items int NOT NULL DEFAULT 0,
    opened_at timestamptz NOT NULL DEFAULT now(),
    closes_at timestamptz NOT NULL,
    closed_at timestamptz,
    notification_id uuid,
    reason text,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id) ON DELETE RESTRICT
);
CREATE UNIQUE INDEX digests_open ON digests (tenant_id, person_id, app, scope_id) WHERE status = 'open';
CREATE INDEX digests_due ON digests (closes_at) WHERE status IN ('open', 'due');
CREATE INDEX digests_person ON digests (tenant_id, person_id, opened_at DESC);

ALTER TABLE digests ENABLE ROW LEVEL SECURITY;
ALTER TABLE digests FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON digests USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
GRANT SELECT, INSERT, UPDATE, DELETE ON digests TO herald_app;
-- Workers find the digests due across tenants (and close each in its tenant's scope).
CREATE POLICY dispatcher ON digests TO herald_dispatcher USING (true);
GRANT SELECT (tenant_id, id, status, closes_at) ON digests TO herald_dispatcher;

-- A gathered notification names its digest, and keeps what the digest's words need of it.
ALTER TABLE notifications ADD COLUMN digest_id uuid, ADD COLUMN digest_item jsonb;
CREATE INDEX notifications_digest ON notifications (tenant_id, digest_id) WHERE digest_id IS NOT NULL;

ALTER TABLE notifications DROP CONSTRAINT notifications_status_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_status_check
    CHECK (status IN ('queued', 'no_device', 'suppressed', 'cancelled', 'digested'));
ALTER TABLE notifications DROP CONSTRAINT notifications_decision_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_decision_check
    CHECK (decision IN ('send', 'muted', 'preference_off', 'viewing', 'quiet_hours', 'no_device', 'superseded', 'digest'));

-- History shows the digest a notification went into.
CREATE OR REPLACE VIEW notification_outcomes WITH (security_invoker = true) AS
SELECT n.tenant_id, n.id, n.event_id, n.kind, n.recipient_id, n.app, n.team_id, n.activity_id, n.conversation_id,
       n.title, n.body, n.event_at, n.created_at,
       CASE WHEN n.status <> 'queued' THEN n.status
            WHEN a.sent > 0 THEN 'sent'
            WHEN a.pending > 0 THEN 'pending'
            WHEN a.expired > 0 THEN 'expired'
            WHEN a.dead = a.total THEN 'dead_token'
            WHEN a.cancelled = a.total THEN 'cancelled'
            ELSE 'failed' END AS status,
       coalesce(n.reason, a.problem) AS reason, a.total AS devices, a.sent AS devices_sent, a.sent_at,
       n.decision, n.deferred_until, n.digest_id
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
    FROM deliveries d
    WHERE d.tenant_id = n.tenant_id AND d.notification_id = n.id
      AND d.id BETWEEN herald_uuid_ms_first(n.id) AND herald_uuid_ms_last(n.id)
) a;
