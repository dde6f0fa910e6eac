-- Preferences and quiet hours (DESIGN.md §15), and the decision fan-out records for every
-- recipient of every event.
--
-- A preference switches pushes of one event kind on one app on or off, for a person, or for
-- the whole tenant (person_id NULL: the default an admin sets). No row: on.
CREATE TABLE notification_preferences (
    tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE RESTRICT,
    id uuid NOT NULL,
    person_id uuid,
    event text NOT NULL,
    app text NOT NULL CHECK (app IN ('member', 'manager')),
    enabled boolean NOT NULL,
    updated_by uuid,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    CONSTRAINT notification_preferences_once UNIQUE NULLS NOT DISTINCT (tenant_id, person_id, event, app),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id) ON DELETE RESTRICT
);

-- A person's quiet hours, on their own clock (people.time_zone): a window that starts on
-- one of `days` (mon,tue,…) and may cross midnight.
CREATE TABLE quiet_hours (
    tenant_id uuid NOT NULL,
    person_id uuid NOT NULL,
    starts_at time NOT NULL,
    ends_at time NOT NULL CHECK (ends_at <> starts_at),
    days text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, person_id),
    FOREIGN KEY (tenant_id, person_id) REFERENCES people (tenant_id, id) ON DELETE RESTRICT
);

-- What fan-out decided for a recipient: send (or send silently: muted), or not and why
-- (preference_off, viewing, no_device, superseded), or later (quiet_hours, until
-- deferred_until). Older rows have none.
ALTER TABLE notifications
    ADD COLUMN decision text CHECK (decision IN ('send', 'muted', 'preference_off', 'viewing', 'quiet_hours', 'no_device', 'superseded')),
    ADD COLUMN deferred_until timestamptz;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['notification_preferences', 'quiet_hours'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', name);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', name);
        EXECUTE format(
            'CREATE POLICY tenant_isolation ON %I USING (tenant_id = herald_current_tenant()) '
            'WITH CHECK (tenant_id = herald_current_tenant())', name);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO herald_app', name);
    END LOOP;
END
$$;

-- History reads the decision through the view.
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
       n.decision, n.deferred_until
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

-- Fan-out finds the chat pushes quiet hours hold back for someone in a conversation (to
-- send one summary instead of each).
CREATE INDEX notifications_deferred ON notifications (tenant_id, recipient_id, conversation_id) WHERE decision = 'quiet_hours';
