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

-- What the counts and the badge count: items neither read nor archived; those not
-- seen are among them (an index-only scan answers both).
CREATE INDEX notifications_inbox_unread ON notifications (tenant_id, recipient_id) INCLUDE (seen_at)
    WHERE activity_id IS NOT NULL AND live IS NULL AND kind <> 'digest'
      AND decision IS DISTINCT FROM 'preference_off' AND read_at IS NULL AND archived_at IS NULL;

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
