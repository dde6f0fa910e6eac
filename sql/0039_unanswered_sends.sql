-- A send whose answer never came (docs/notifications.md#delivery): the request left, and then
-- a timeout or a lost connection, so the provider may have taken it. Such a delivery is sent
-- again once at most; after its second unanswered send it is `unanswered`, not sent a third
-- time. `unanswered` counts its attempts of the kind.
ALTER TABLE deliveries ADD COLUMN unanswered smallint NOT NULL DEFAULT 0;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
    CHECK (status IN ('queued', 'sending', 'sent', 'dead_token', 'failed', 'expired', 'cancelled', 'unanswered'));
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_outcome_check;
ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_outcome_check
    CHECK (outcome IN ('delivered', 'retry', 'dead_token', 'bad_request', 'configuration_error', 'cancelled', 'unanswered'));

-- A notification none of whose devices took it, and one of which may hold it, is `unanswered`.
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
       n.decision, n.deferred_until, n.digest_id
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
