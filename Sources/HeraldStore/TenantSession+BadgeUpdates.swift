import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// A row when `person` has a device besides `device` that a badge update would go to
    /// (`scheduleBadgeUpdate`), none otherwise.
    func otherBadgedDevices(of person: UUID, except device: UUID?) -> PostgresQuery {
        """
        SELECT 1 FROM devices d
        WHERE d.tenant_id = \(tenantID) AND d.person_id = \(person) AND d.removed_at IS NULL AND d.deactivated_at IS NULL
          AND d.kind = 'alert' AND d.id IS DISTINCT FROM \(device)
        LIMIT 1
        """
    }

    /// How long a device waits between two badge updates (docs/inbox.md#one-badge).
    public static let badgeUpdateSpacing: Duration = .seconds(5)
    /// How long a badge update may wait to be sent before it is pointless.
    static let badgeUpdateDeadline: Duration = .seconds(3_600)

    /// `person`'s badge fell to `badge` on one device (`except`; nil when the reader named
    /// none): their other devices get a silent badge update (docs/inbox.md#one-badge).
    /// It is a notification of kind `badge` per app, with a delivery per device that the
    /// dispatcher sends as any other: at once, or `badgeUpdateSpacing` after the device's last
    /// one was due; one still waiting is cancelled, the newer count replacing it. A device
    /// whose last push of the day already carried this number gets none. History shows them.
    ///
    /// Most readers have no other device: the caller asks `otherBadgedDevices` first (one
    /// probe of an index, sent with its own statements) and calls this only when it found one;
    /// this statement plans every week of deliveries and notifications.
    func scheduleBadgeUpdate(person: UUID, badge: Int, except device: UUID?) async throws {
        let data = PushPayload.badge(badge)
        let spacing = Self.badgeUpdateSpacing.timeInterval
        try await connection.query(
            """
            WITH targets AS (
                SELECT d.id, d.app, d.provider FROM devices d
                WHERE d.tenant_id = \(tenantID) AND d.person_id = \(person) AND d.removed_at IS NULL AND d.deactivated_at IS NULL
                  AND d.kind = 'alert' AND d.id IS DISTINCT FROM \(device)
                  -- The badge of the device's last push of the day, if it is this one, is what it shows.
                  AND (SELECT n.badge FROM deliveries b JOIN notifications n ON n.tenant_id = b.tenant_id AND n.id = b.notification_id
                       WHERE b.tenant_id = \(tenantID) AND b.device_id = d.id AND b.status IN ('queued', 'sending', 'sent')
                         AND b.id >= herald_uuid_floor(now() - interval '1 day') AND n.id >= herald_uuid_floor(now() - interval '1 day')
                       ORDER BY b.id DESC LIMIT 1) IS DISTINCT FROM \(badge)
            ), recent AS (
                -- Each device's badge updates of the last day: when the last one that went was
                -- due, and those still waiting.
                SELECT b.device_id,
                       max(b.due_at) FILTER (WHERE b.status NOT IN ('queued', 'cancelled')) AS last,
                       array_agg(b.id) FILTER (WHERE b.status = 'queued') AS waiting
                FROM deliveries b JOIN notifications n ON n.tenant_id = b.tenant_id AND n.id = b.notification_id
                WHERE b.tenant_id = \(tenantID) AND b.device_id IN (SELECT id FROM targets) AND n.kind = \(PushPayload.badgeType)
                  AND b.id >= herald_uuid_floor(now() - interval '1 day') AND n.id >= herald_uuid_floor(now() - interval '1 day')
                GROUP BY b.device_id
            ), superseded AS (
                UPDATE deliveries d SET status = 'cancelled', last_error = 'superseded: a newer badge update', updated_at = now()
                FROM recent r
                WHERE d.tenant_id = \(tenantID) AND d.id = ANY(r.waiting) AND d.device_id = r.device_id AND d.status = 'queued'
                  AND NOT herald_delivery_leased(d.tenant_id, d.id)
            ), told AS (
                INSERT INTO notifications (tenant_id, id, event_id, kind, recipient_id, app, title, body, data, badge, sound, thread_id,
                                           status, event_at, decision)
                SELECT \(tenantID), herald_child_id(e.id, e.id::text || a.app), e.id, \(PushPayload.badgeType), \(person), a.app,
                       'Badge update', 'badge ' || \(badge)::text, \(PostgresJSON(data)), \(badge), false, '', 'queued', now(), 'send'
                FROM (SELECT DISTINCT app FROM targets) a CROSS JOIN (SELECT \(UUID.v7())::uuid AS id) e
                RETURNING id, app
            ), sent AS (
                INSERT INTO deliveries (tenant_id, id, notification_id, device_id, provider, due_at, deadline_at)
                SELECT \(tenantID), herald_child_id(n.id, n.id::text || t.id::text), n.id, t.id, t.provider,
                       greatest(now(), r.last + make_interval(secs => \(spacing))),
                       greatest(now(), r.last + make_interval(secs => \(spacing))) + make_interval(secs => \(Self.badgeUpdateDeadline.timeInterval))
                FROM targets t JOIN told n ON n.app = t.app LEFT JOIN recent r ON r.device_id = t.id
                RETURNING 1
            )
            SELECT pg_notify(\(DeliveryQueue.deliveriesChannel), \(tenantID.lowercasedString)) WHERE EXISTS (SELECT FROM sent)
            """)
    }
}
