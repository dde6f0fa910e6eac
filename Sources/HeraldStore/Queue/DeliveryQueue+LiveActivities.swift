import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Writes the Live Activity pushes of a batch's events (in the fan-out transaction, in the
    /// tenant's scope): a notification per person and app that has a token for it, a delivery
    /// per token, queued for the send loop.
    /// - Returns: how many deliveries were queued.
    static func writeLiveActivities(
        _ drafts: [LiveActivityDraft], tenant: UUID, deadline: Duration, freshness: DeviceFreshness, on connection: PostgresConnection
    ) async throws -> Int {
        guard !drafts.isEmpty else { return 0 }
        let row = try await connection.query(
            try liveActivityStatement(drafts, tenant: tenant, deadline: deadline, freshness: freshness)
        ).single()
        return try row.decode(Int.self, at: 0)
    }

    /// Why an update was never sent: its activity changed again before it went out.
    static let newerContentState = "superseded: a newer content state of the Live Activity"

    /// The one statement of `writeLiveActivities` (its own function so that tests can read it).
    static func liveActivityStatement(
        _ drafts: [LiveActivityDraft], tenant: UUID, deadline: Duration, freshness: DeviceFreshness
    ) throws -> PostgresQuery {
        // One input row per person a start goes to; one per update or end (its recipients are
        // whoever uploaded an update token for the activity).
        struct Row {
            let draft: LiveActivityDraft
            let start: LiveActivityDraft.Start?
        }
        let rows = drafts.flatMap { draft in
            draft.starts.isEmpty ? [Row(draft: draft, start: nil)] : draft.starts.map { Row(draft: draft, start: $0) }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let lives = try rows.map { PostgresJSONText(String(decoding: try encoder.encode($0.draft.content), as: UTF8.self)) }
        let staleSeconds = freshness.staleAfter.timeInterval
        return """
            WITH input AS (
                SELECT * FROM unnest(
                    \(rows.map(\.draft.eventID))::uuid[], \(rows.map(\.draft.activityID))::uuid[], \(rows.map(\.draft.teamID))::uuid[],
                    \(rows.map(\.start?.person))::uuid[], \(rows.map(\.start?.app.rawValue))::text[],
                    \(rows.map(\.draft.content.event.notificationKind))::text[], \(rows.map { $0.start?.title ?? $0.draft.title })::text[],
                    \(rows.map { $0.start?.body ?? $0.draft.body })::text[], \(lives)::jsonb[], \(rows.map(\.draft.eventAt))::timestamptz[])
                AS i(event_id, activity_id, team_id, person_id, app, kind, title, body, live, event_at)
            ), later AS (
                -- An update of an activity that changed again since (a later event in the
                -- outbox, fanned out or not) is never sent: the later one carries the newer state.
                SELECT i.event_id, (
                    SELECT o.kind FROM outbox e
                    CROSS JOIN LATERAL (
                        SELECT o.kind FROM outbox o
                        WHERE o.tenant_id = e.tenant_id AND o.activity_id = e.activity_id AND o.seq > e.seq
                        ORDER BY o.seq LIMIT 1) o
                    WHERE e.tenant_id = \(tenant) AND e.id = i.event_id) AS superseded_by
                FROM input i WHERE i.kind = \(LiveActivityContent.Event.update.notificationKind)
            ), targets AS (
                -- A start: the people's push-to-start tokens (fresh ones: docs/apps.md).
                SELECT i.*, d.id AS device_id, d.person_id AS recipient_id, d.app AS recipient_app
                FROM input i
                JOIN devices d ON d.tenant_id = \(tenant) AND d.person_id = i.person_id AND d.app = i.app AND d.kind = 'liveactivity'
                                  AND d.removed_at IS NULL AND d.deactivated_at IS NULL
                                  AND d.last_seen_at > now() - make_interval(secs => \(staleSeconds))
                WHERE i.person_id IS NOT NULL
                UNION ALL
                -- An update or an end: every update token uploaded for the activity.
                SELECT i.*, d.id, d.person_id, d.app
                FROM input i
                JOIN devices d ON d.tenant_id = \(tenant) AND d.activity_id = i.activity_id AND d.kind = 'liveactivity_update'
                                  AND d.removed_at IS NULL AND d.deactivated_at IS NULL
                WHERE i.person_id IS NULL
            ), recipients AS (
                SELECT DISTINCT ON (t.event_id, t.recipient_id, t.recipient_app) t.*, l.superseded_by
                FROM targets t LEFT JOIN later l ON l.event_id = t.event_id
                ORDER BY t.event_id, t.recipient_id, t.recipient_app
            ), inserted AS (
                INSERT INTO notifications (tenant_id, id, event_id, kind, recipient_id, app, team_id, activity_id, title, body, data,
                                           badge, sound, thread_id, status, reason, event_at, decision, live)
                SELECT \(tenant), herald_child_id(r.event_id, r.event_id::text || r.recipient_id::text || r.recipient_app || ':liveactivity'),
                       r.event_id, r.kind, r.recipient_id, r.recipient_app, r.team_id, r.activity_id, r.title, r.body, '{}'::jsonb,
                       0, false, r.activity_id::text,
                       CASE WHEN r.superseded_by IS NULL THEN 'queued' ELSE 'cancelled' END,
                       CASE WHEN r.superseded_by IS NOT NULL THEN 'superseded by ' || r.superseded_by END,
                       r.event_at, CASE WHEN r.superseded_by IS NULL THEN 'send' ELSE 'superseded' END, r.live
                FROM recipients r
                ON CONFLICT (tenant_id, id) DO NOTHING
                RETURNING id, event_id, recipient_id, app, kind, status
            ), superseded AS (
                -- Updates written before and not sent yet (held back by a retry, or a paused
                -- provider) to the tokens a newer state goes to now: cancelled, never sent.
                UPDATE deliveries d SET status = 'cancelled', last_error = \(Self.newerContentState), updated_at = now()
                FROM notifications n
                WHERE n.tenant_id = \(tenant) AND n.activity_id = ANY(\(drafts.map(\.activityID))::uuid[]) AND n.live IS NOT NULL
                  AND n.kind <> \(LiveActivityContent.Event.start.notificationKind)
                  AND d.tenant_id = n.tenant_id AND d.notification_id = n.id AND d.status = 'queued'
                  AND NOT herald_delivery_leased(d.tenant_id, d.id)
                  AND d.device_id IN (
                      SELECT t.device_id FROM targets t JOIN inserted i ON i.event_id = t.event_id AND i.recipient_id = t.recipient_id
                      WHERE i.status = 'queued' AND i.kind <> \(LiveActivityContent.Event.start.notificationKind))
            ), created AS (
                INSERT INTO deliveries (tenant_id, id, notification_id, device_id, provider, due_at, deadline_at, status)
                SELECT \(tenant), herald_child_id(n.id, n.id::text || t.device_id::text), n.id, t.device_id, 'apns', now(),
                       now() + make_interval(secs => \(deadline.timeInterval)), 'queued'
                FROM inserted n JOIN targets t ON t.event_id = n.event_id AND t.recipient_id = n.recipient_id AND t.recipient_app = n.app
                WHERE n.status = 'queued'
                ON CONFLICT (tenant_id, notification_id, id) DO NOTHING
                RETURNING 1
            )
            SELECT count(*)::int FROM created
            """
    }
}
