import Foundation
import HeraldCore
import HeraldPostgres

/// How often one kind of push was opened, and how soon (docs/inbox.md#open-rates): the
/// notifications of one event, app and priority that a device took, those whose push was
/// opened, and the time from the first device taking it to the opening.
public struct EngagementGroup: Sendable, Equatable {
    public let event: String
    public let app: AppKind
    public let priority: Priority?
    public let sent: Int
    public let opened: Int
    public let p50Milliseconds: Double?
    public let p90Milliseconds: Double?

    public var openRate: Double? { sent > 0 ? Double(opened) / Double(sent) : nil }
}

extension Store {
    /// A tenant's open rates and times to open since `since`, by event, app and priority. For
    /// those who run the tenant (`AccessPolicy.mayReadStatistics`); anyone else is forbidden.
    public func engagementStats(viewer: AccessPolicy, tenant: Tenant, since: Date) async throws -> [EngagementGroup] {
        try Self.requireStatisticsReader(viewer)
        let rows = try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                """
                SELECT n.kind, n.app, n.data->>'priority', count(*)::int, count(n.opened_at)::int,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY greatest(0, extract(epoch FROM n.opened_at - s.sent_at) * 1000))
                           FILTER (WHERE n.opened_at IS NOT NULL),
                       percentile_cont(0.9) WITHIN GROUP (ORDER BY greatest(0, extract(epoch FROM n.opened_at - s.sent_at) * 1000))
                           FILTER (WHERE n.opened_at IS NOT NULL)
                FROM notifications n
                CROSS JOIN LATERAL (
                    SELECT min(d.sent_at) AS sent_at FROM deliveries d
                    WHERE d.tenant_id = n.tenant_id AND d.notification_id = n.id AND d.status = 'sent'
                      AND d.id BETWEEN herald_uuid_ms_first(n.id) AND herald_uuid_ms_last(n.id)
                ) s
                WHERE n.tenant_id = \(tenant.id) AND n.created_at >= \(since) AND n.live IS NULL AND n.kind <> \(PushPayload.badgeType)
                  AND s.sent_at IS NOT NULL
                GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                """)
        }
        return try rows.map { row in
            let (event, app, priority, sent, opened) = try row.decode((String, String, String?, Int, Int).self)
            return EngagementGroup(
                event: event, app: try TenantSession.decodeEnum(app), priority: priority.flatMap(Priority.init(rawValue:)), sent: sent,
                opened: opened, p50Milliseconds: try row.decode(Double?.self, at: 5), p90Milliseconds: try row.decode(Double?.self, at: 6))
        }
    }
}
