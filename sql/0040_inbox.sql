-- The inbox (docs/inbox.md): every notification about an activity is an item of its recipient,
-- whatever became of its push, and keeps what they did with it. The items are the
-- notifications' own rows, so they are pruned with history a week at a time; what the person
-- did is kept on the row: when and on which device it was seen, read, interacted with (and
-- the action), archived, its push opened, and its push received by the app.
--
-- An item is a notification with an activity, that is not a Live Activity's push nor a
-- digest's own, and that the person did not turn off (preference off): `InboxItem.includes`.
-- HeraldStore's `inboxItem` interpolation writes the condition word for word as here, so
-- that the planner matches the partial indexes below.
ALTER TABLE notifications
    ADD COLUMN seen_at timestamptz, ADD COLUMN seen_device uuid,
    ADD COLUMN read_at timestamptz, ADD COLUMN read_device uuid,
    ADD COLUMN interacted_at timestamptz, ADD COLUMN interacted_device uuid, ADD COLUMN interacted_action text,
    ADD COLUMN archived_at timestamptz, ADD COLUMN archived_device uuid,
    ADD COLUMN opened_at timestamptz, ADD COLUMN opened_device uuid,
    ADD COLUMN delivered_at timestamptz, ADD COLUMN delivered_device uuid,
    -- A read item was seen: marking one unseen marks it unread too.
    ADD CONSTRAINT notifications_read_was_seen CHECK (read_at IS NULL OR seen_at IS NOT NULL);

-- A person's items, newest first (the inbox's pages).
CREATE INDEX notifications_inbox ON notifications (tenant_id, recipient_id, created_at, id)
    WHERE activity_id IS NOT NULL AND live IS NULL AND kind <> 'digest'
      AND decision IS DISTINCT FROM 'preference_off';

-- What the counts and the badge read (docs/inbox.md#one-badge): each person's items neither
-- read nor archived, and those of them not seen, kept as they change, so that reading them is
-- one row however many items a person has (counting them took 13 ms of PostgreSQL's time for
-- 20,000, on every push's badge). Fan-out adds what it writes; a mark or an opening moves
-- them by what it changed; a week of history dropped takes its items out
-- (herald_drop_history_partition, below).
CREATE TABLE inbox_counts (
    tenant_id uuid NOT NULL,
    person_id uuid NOT NULL,
    unread integer NOT NULL DEFAULT 0,
    unseen integer NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, person_id)
);
ALTER TABLE inbox_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE inbox_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON inbox_counts
    USING (tenant_id = herald_current_tenant()) WITH CHECK (tenant_id = herald_current_tenant());
CREATE POLICY dispatcher ON inbox_counts TO herald_dispatcher USING (true) WITH CHECK (true);
-- The owner drops weeks of history across tenants (a function that runs as it).
CREATE POLICY maintenance ON inbox_counts TO CURRENT_USER USING (true) WITH CHECK (true);
GRANT SELECT, INSERT, UPDATE, DELETE ON inbox_counts TO herald_app;
GRANT SELECT, INSERT, UPDATE ON inbox_counts TO herald_dispatcher;

INSERT INTO inbox_counts (tenant_id, person_id, unread, unseen)
SELECT tenant_id, recipient_id, count(*), count(*) FROM notifications
WHERE activity_id IS NOT NULL AND live IS NULL AND kind <> 'digest' AND decision IS DISTINCT FROM 'preference_off'
GROUP BY 1, 2;

-- As in 0018, and a dropped week's unread items leave the counts first.
CREATE OR REPLACE FUNCTION herald_drop_history_partition(day date) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
    suffix text := to_char(day, 'YYYYMMDD');
    held bigint := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('herald_history_partitions'));
    IF herald_history_partition_live(day) THEN
        RETURN NULL;
    END IF;
    IF to_regclass('public.notifications_' || suffix) IS NOT NULL THEN
        SELECT greatest(reltuples, 0)::bigint INTO held FROM pg_class WHERE oid = to_regclass('public.notifications_' || suffix);
        EXECUTE format(
            'UPDATE inbox_counts c SET unread = greatest(0, c.unread - x.unread), unseen = greatest(0, c.unseen - x.unseen) '
            'FROM (SELECT tenant_id, recipient_id, count(*) AS unread, count(*) FILTER (WHERE seen_at IS NULL) AS unseen FROM %I '
            '      WHERE activity_id IS NOT NULL AND live IS NULL AND kind <> ''digest'' AND decision IS DISTINCT FROM ''preference_off'' '
            '        AND read_at IS NULL AND archived_at IS NULL GROUP BY 1, 2) x '
            'WHERE c.tenant_id = x.tenant_id AND c.person_id = x.recipient_id', 'notifications_' || suffix);
    END IF;
    EXECUTE format('DROP TABLE IF EXISTS %I, %I, %I',
                   'delivery_attempts_' || suffix, 'deliveries_' || suffix, 'notifications_' || suffix);
    RETURN held;
END
$$;

-- Items changed (`inbox_status`): the `inbox.status` frame to their person's sockets, and the
-- webhooks' `notification.seen` and the rest. (An item added comes with its `notification` row.)
ALTER TABLE live_pending DROP CONSTRAINT live_pending_kind_check;
ALTER TABLE live_pending ADD CONSTRAINT live_pending_kind_check
    CHECK (kind IN ('message', 'receipt', 'conversation', 'activity', 'notification', 'outcome', 'device', 'inbox_status'));

-- History shows what the person did with each notification.
CREATE OR REPLACE VIEW notification_outcomes WITH (security_invoker = true) AS
SELECT n.tenant_id, n.id, n.event_id, n.kind, n.recipient_id, n.app, n.team_id, n.activity_id, n.conversation_id,
       n.title, n.body, n.event_at, n.created_at,
       CASE WHEN n.status <> 'queued' THEN n.status
            WHEN a.sent > 0 THEN 'sent'
            WHEN a.pending > 0 THEN 'pending'
            WHEN a.expired > 0 THEN 'expired'
            WHEN a.unanswered > 0 THEN 'unanswered'
            WHEN a.dead = a.total THEN 'dead_token'
            WHEN a.cancelled = a.total THEN 'cancelled'
            ELSE 'failed' END AS status,
       coalesce(n.reason, a.problem) AS reason, a.total AS devices, a.sent AS devices_sent, a.sent_at,
       n.decision, n.deferred_until, n.digest_id,
       n.seen_at, n.seen_device, n.read_at, n.read_device, n.interacted_at, n.interacted_device, n.interacted_action,
       n.archived_at, n.archived_device, n.opened_at, n.opened_device, n.delivered_at, n.delivered_device
FROM notifications n
CROSS JOIN LATERAL (
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE d.status = 'sent')::int AS sent,
           count(*) FILTER (WHERE d.status IN ('queued', 'sending'))::int AS pending,
           count(*) FILTER (WHERE d.status = 'expired')::int AS expired,
           count(*) FILTER (WHERE d.status = 'unanswered')::int AS unanswered,
           count(*) FILTER (WHERE d.status = 'dead_token')::int AS dead,
           count(*) FILTER (WHERE d.status = 'cancelled')::int AS cancelled,
           min(d.sent_at) AS sent_at,
           string_agg(DISTINCT d.status || ': ' || d.last_error, '; ')
               FILTER (WHERE d.status <> 'sent' AND d.last_error IS NOT NULL) AS problem
    FROM deliveries d
    WHERE d.tenant_id = n.tenant_id AND d.notification_id = n.id
      AND d.id BETWEEN herald_uuid_ms_first(n.id) AND herald_uuid_ms_last(n.id)
) a;
