import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// The one statement of `write`: notifications, deliveries, the events marked done.
    /// (Its own function so that tests can read its plan.)
    /// - Parameter outboxFloor: where pending events begin (`QueueFloor`): the events are
    ///   marked done from there on, so that PostgreSQL, which may find them through the index
    ///   of pending events, does not walk the versions of every event done before them that a
    ///   snapshot held elsewhere keeps.
    static func writeStatement(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, deadline: Duration, claim: FanOutClaim?,
        freshness: DeviceFreshness = .default, outboxFloor: Int64 = 0
    ) throws -> PostgresQuery {
        // With no drafts the same statement only marks the events done.
        let columns = try DraftColumns(drafts)
        let shared = columns.shared
        let room = claim?.room ?? 0
        let worker = claim?.worker ?? ""
        let leaseSeconds = claim?.lease.timeInterval ?? 0
        let leaseID = claim?.leaseID ?? UUID()
        let paused = claim?.paused.map(\.rawValue) ?? []
        let summarizes = drafts.contains { $0.decision == .quietHours && $0.conversationID != nil }
        // What digests gathered (`gather`): which, and what each will say of its item (nothing
        // is encoded for the fan-outs that gather nothing, most of them).
        var digestItems = [PostgresJSONText?](repeating: nil, count: drafts.count)
        if drafts.contains(where: { $0.digest != nil }) {
            let encoder = JSONEncoder()
            digestItems = try drafts.map { draft in
                try draft.digest.map { PostgresJSONText(String(decoding: try encoder.encode($0.item), as: UTF8.self)) }
            }
        }
        // A device not registered again since then is stale: not sent to (docs/apps.md).
        let staleSeconds = freshness.staleAfter.timeInterval
        let staleReason = freshness.staleReason
        return """
            WITH input AS (
                -- Each recipient's content by its position in the shared arrays (a handful of
                -- elements), not by a join: joined, the planner guessed 5 rows where there were
                -- 1,000 and matched the new deliveries to their notifications in a nested loop.
                -- The data is bound as jsonb[], parsed once: cast from text[] here, under a
                -- generic plan the cast would run for every row, on every element again.
                SELECT (\(shared.map(\.eventID))::uuid[])[i.content] AS event_id, (\(shared.map(\.kind))::text[])[i.content] AS kind,
                       i.recipient_id, i.app, (\(shared.map(\.teamID))::uuid[])[i.content] AS team_id,
                       (\(shared.map(\.activityID))::uuid[])[i.content] AS activity_id,
                       (\(shared.map(\.conversationID))::uuid[])[i.content] AS conversation_id,
                       (\(shared.map(\.title))::text[])[i.content] AS title, (\(shared.map(\.body))::text[])[i.content] AS body,
                       (\(shared.map { PostgresJSONText($0.data) })::jsonb[])[i.content] AS data, i.badge, (\(shared.map(\.sound))::bool[])[i.content] AS sound,
                       (\(shared.map(\.threadID))::text[])[i.content] AS thread_id, (\(shared.map(\.imageURL))::text[])[i.content] AS image_url,
                       (\(shared.map(\.eventAt))::timestamptz[])[i.content] AS event_at, i.suppressed, i.decision,
                       i.deferred_until, i.deferred_reason, i.summarized, i.digest_id, i.digest_item, i.email
                FROM unnest(
                    \(columns.content)::int[], \(drafts.map(\.recipientID))::uuid[], \(drafts.map(\.app.rawValue))::text[],
                    \(drafts.map(\.content.badge))::int[], \(drafts.map(\.suppressedReason))::text[], \(drafts.map(\.decision.rawValue))::text[],
                    \(drafts.map(\.deferredUntil))::timestamptz[], \(drafts.map(\.deferredReason))::text[],
                    \(drafts.map(\.summarizedLater))::bool[], \(drafts.map { $0.digest?.digestID })::uuid[], \(digestItems)::jsonb[],
                    \(drafts.map(\.email.rawValue))::int[])
                AS i(content, recipient_id, app, badge, suppressed, decision, deferred_until, deferred_reason, summarized, digest_id, digest_item, email)
            ), reach AS MATERIALIZED (
                -- Materialized: each of its columns is read in several CASEs below, and inlined,
                -- each read ran its subquery again (four times for a part of 1,000).
                -- Reachable: a probe of the recipient's devices on their index (as an EXISTS,
                -- it was planned as one pass over all of the tenant's devices per statement).
                -- Mailed: by email too, to the person's address (`EmailReach`: always, or when no
                -- device can be pushed); the lookup runs only for drafts that may be mailed.
                SELECT i.*, coalesce(dv.fresh, false) AS reachable, coalesce(NOT dv.fresh, false) AS stale_only,
                       em.id AS email_device, em.id IS NOT NULL AND (i.email >= 2 OR NOT coalesce(dv.fresh, false)) AS mailed,
                       -- The activity's next change of status, if it moved on before this event was
                       -- fanned out (a reminder about it supersedes nothing).
                       CASE WHEN i.activity_id IS NOT NULL THEN (\(laterStatusChangeOf: "i.event_id", tenant: tenant)) END AS superseded_by
                FROM input i
                -- The recipient's most recently registered device: if it is stale, all are.
                LEFT JOIN LATERAL (
                    SELECT d.last_seen_at > now() - make_interval(secs => \(staleSeconds)) AS fresh FROM devices d
                    WHERE d.tenant_id = \(tenant) AND d.person_id = i.recipient_id AND d.app = i.app
                      AND d.removed_at IS NULL AND d.deactivated_at IS NULL AND d.kind = 'alert'
                    ORDER BY d.last_seen_at DESC LIMIT 1) dv ON true
                LEFT JOIN LATERAL (
                    SELECT e.id FROM devices e
                    WHERE i.email > 0 AND e.tenant_id = \(tenant) AND e.person_id = i.recipient_id AND e.kind = 'email'
                      AND e.removed_at IS NULL AND e.deactivated_at IS NULL
                    LIMIT 1) em ON true
            ), inserted AS (
                INSERT INTO notifications (tenant_id, id, event_id, kind, recipient_id, app, team_id, activity_id,
                                           conversation_id, title, body, data, badge, sound, thread_id, image_url,
                                           status, reason, event_at, decision, deferred_until, digest_id, digest_item)
                SELECT \(tenant), herald_child_id(r.event_id, r.event_id::text || r.recipient_id::text), r.event_id, r.kind, r.recipient_id, r.app, r.team_id, r.activity_id, r.conversation_id,
                       r.title, r.body, r.data, r.badge, r.sound, r.thread_id, r.image_url,
                       CASE WHEN r.superseded_by IS NOT NULL OR r.summarized THEN 'cancelled' WHEN r.suppressed IS NOT NULL THEN 'suppressed'
                            -- Gathered into a digest (or shown by the open app, and so in none).
                            WHEN r.decision = 'digest' THEN CASE WHEN r.digest_id IS NULL THEN 'suppressed' ELSE 'digested' END
                            WHEN r.reachable OR r.mailed THEN 'queued' ELSE 'no_device' END,
                       CASE WHEN r.superseded_by IS NOT NULL THEN 'superseded by ' || r.superseded_by
                            WHEN r.summarized THEN \(unsafeRaw: Self.summarizedReason)
                            WHEN r.suppressed IS NOT NULL THEN r.suppressed
                            WHEN r.decision = 'digest' THEN r.deferred_reason
                            WHEN r.stale_only AND NOT r.mailed THEN \(staleReason)
                            WHEN NOT r.reachable AND NOT r.mailed THEN 'no active device on the ' || r.app || ' app'
                            WHEN NOT r.reachable THEN coalesce(r.deferred_reason || '; ', '') || 'no active device on the ' || r.app || ' app: by email'
                            ELSE r.deferred_reason END,
                       r.event_at,
                       CASE WHEN r.superseded_by IS NOT NULL THEN 'superseded' WHEN r.suppressed IS NOT NULL THEN r.decision
                            WHEN r.decision = 'digest' THEN r.decision WHEN NOT r.reachable AND NOT r.mailed THEN 'no_device' ELSE r.decision END,
                       CASE WHEN r.superseded_by IS NULL AND r.suppressed IS NULL AND (r.reachable OR r.mailed) THEN r.deferred_until END,
                       CASE WHEN r.superseded_by IS NULL THEN r.digest_id END, r.digest_item
                FROM reach r
                ON CONFLICT (tenant_id, id) DO NOTHING
                RETURNING tenant_id, id, event_id, recipient_id, app, status, deferred_until, conversation_id, kind, title, body, activity_id, badge,
                          reason, decision, digest_id, live
            ), \(countingItemsOf: "inserted", tenant: tenant), told AS (
                -- A notification held back, superseded or suppressed, for tenants with a webhook
                -- endpoint (docs/webhooks.md): rows of the durable feed no socket sees.
                INSERT INTO live_pending (tenant_id, kind, payload)
                SELECT \(tenant), 'outcome', jsonb_build_object(
                    'type', CASE WHEN i.status = 'suppressed' THEN 'notification.suppressed' WHEN i.status = 'digested' THEN 'notification.digested'
                                 WHEN i.status = 'cancelled' THEN 'notification.superseded' ELSE 'notification.deferred' END,
                    'data', jsonb_build_object('notificationId', i.id, 'recipientId', i.recipient_id, 'app', i.app, 'event', i.kind,
                                               'activityId', i.activity_id, 'conversationId', i.conversation_id, 'decision', i.decision,
                                               'reason', i.reason, 'deferredUntil', i.deferred_until, 'digestId', i.digest_id))
                FROM inserted i
                WHERE (i.status IN ('suppressed', 'cancelled', 'digested') OR (i.status = 'queued' AND i.deferred_until IS NOT NULL))
                  AND EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = \(tenant))
            ), banners AS (
                -- The live channel's in-app banner of each activity notification, pushed or not
                -- (a chat message reaches open apps as its own frame).
                INSERT INTO live_pending (tenant_id, kind, person_id, payload)
                SELECT \(tenant), 'notification', i.recipient_id,
                       jsonb_build_object('id', i.id, 'event', i.kind, 'title', i.title, 'body', i.body, 'activityId', i.activity_id,
                                          'badge', i.badge)
                FROM inserted i WHERE i.activity_id IS NOT NULL
            ), aimed AS (
                SELECT n.id AS notification_id, d.id AS device_id, d.provider, n.deferred_until, x.live, x.stale
                FROM inserted n
                -- Not pushed to those who chose email instead and are mailed.
                JOIN reach r ON r.event_id = n.event_id AND r.recipient_id = n.recipient_id AND r.app = n.app AND NOT (r.mailed AND r.email = 3)
                -- (Live Activity tokens have pushes of their own: `liveActivityStatement`.)
                JOIN devices d ON d.tenant_id = \(tenant) AND d.person_id = n.recipient_id AND d.app = n.app
                                  AND d.removed_at IS NULL AND d.deactivated_at IS NULL AND d.kind = 'alert'
                -- A chat push to a device whose app is open in the foreground on a live socket
                -- of the device's owner (on a server still alive) is skipped: the app shows the
                -- message itself.
                CROSS JOIN LATERAL (
                    SELECT n.conversation_id IS NOT NULL AND EXISTS (
                        SELECT FROM live_devices v JOIN live_servers s ON s.id = v.server_id
                        WHERE v.tenant_id = d.tenant_id AND v.device_id = d.id AND v.person_id = d.person_id
                          AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval))) AS live,
                    d.last_seen_at <= now() - make_interval(secs => \(staleSeconds)) AS stale
                ) x
                WHERE n.status = 'queued'
                UNION ALL
                -- The person's address, for those mailed.
                SELECT n.id, r.email_device, 'email', n.deferred_until, false, false
                FROM inserted n JOIN reach r ON r.event_id = n.event_id AND r.recipient_id = n.recipient_id AND r.app = n.app
                WHERE n.status = 'queued' AND r.mailed
            ), created AS (
                INSERT INTO deliveries (tenant_id, id, notification_id, device_id, provider, due_at, deadline_at, status, last_error)
                SELECT \(tenant), herald_child_id(t.notification_id, t.notification_id::text || t.device_id::text),
                       t.notification_id, t.device_id, t.provider,
                       -- Quiet hours: due when they end, and the deadline counts from then.
                       coalesce(t.deferred_until, now()), coalesce(t.deferred_until, now()) + make_interval(secs => \(deadline.timeInterval)),
                       CASE WHEN t.live OR t.stale THEN 'cancelled' ELSE 'queued' END,
                       CASE WHEN t.live THEN \(unsafeRaw: Self.liveReason) WHEN t.stale THEN \(staleReason) END
                FROM aimed t
                ON CONFLICT (tenant_id, notification_id, id) DO NOTHING
                RETURNING id, notification_id, device_id, provider, status, due_at, deadline_at
            ), claimed AS (
                -- What the worker sends at once: up to its room of what was created now (one
                -- that existed is left alone), due now, and not to a provider it holds back.
                SELECT * FROM (
                    SELECT c.*, row_number() OVER (ORDER BY c.notification_id, c.device_id) AS turn FROM created c
                    WHERE c.status = 'queued' AND c.due_at <= now() AND NOT c.provider = ANY(\(paused)::text[])) c
                WHERE c.turn <= \(room)
            ), lease AS (
                -- Leased to it in one row (`delivery_leases`), the deliveries written once.
                INSERT INTO delivery_leases (tenant_id, id, worker, expires_at, deliveries, notifications, attempts)
                SELECT \(tenant), \(leaseID), \(worker), now() + make_interval(secs => \(leaseSeconds)),
                       array_agg(c.id), array_agg(c.notification_id), array_agg(0)
                FROM claimed c HAVING count(*) > 0
            )\(unsafeRaw: summarizes ? Self.summarizedCTE : ""), done AS (
                UPDATE outbox SET fanned_out_at = now(), lease_owner = NULL, lease_expires_at = NULL
                WHERE tenant_id = \(tenant) AND id = ANY(\(events)) AND fanned_out_at IS NULL AND seq >= \(outboxFloor)
            )
            SELECT c.id, n.event_id, n.recipient_id, c.device_id, c.provider, c.deadline_at, v.token, now(), NULL::int, c.notification_id,
                   v.address, v.webpush_p256dh, v.webpush_auth
            FROM claimed c JOIN devices v ON v.tenant_id = \(tenant) AND v.id = c.device_id
            JOIN inserted n ON n.id = c.notification_id
            UNION ALL
            SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*)::int, NULL, NULL, NULL, NULL FROM created
            """
    }

    /// Why a chat push to a device was skipped: its app had the message on screen already.
    static let liveReason = "'live: the app was open in the foreground on a live socket and showed it'"

    /// A chat push quiet hours defer replaces the ones they already hold back for the same
    /// person and conversation: it says how many there are (see `FanOut.chatDrafts`).
    static let summarizedReason = "'summarized: a later push in quiet hours counts it'"
    static let summarizedCTE = """
        , summarized AS (
            UPDATE deliveries d SET status = 'cancelled', last_error = \(summarizedReason), updated_at = now()
            FROM inserted i, notifications n
            WHERE i.status = 'queued' AND i.deferred_until IS NOT NULL AND n.tenant_id = d.tenant_id
              AND n.recipient_id = i.recipient_id AND n.conversation_id = i.conversation_id AND n.id <> i.id
              AND n.decision = 'quiet_hours' AND n.deferred_until > now()
              AND d.tenant_id = i.tenant_id AND d.notification_id = n.id AND d.status = 'queued'
        )
        """
}
