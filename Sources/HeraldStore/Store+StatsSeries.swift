import Foundation
import HeraldCore
import HeraldPostgres

/// One slice of time in a tenant's delivery history (the console's charts).
public struct DeliveryBucket: Sendable, Equatable {
    public let start: Date
    /// Notifications created in the slice.
    public let notifications: Int
    /// Their deliveries that were accepted, and those that reached an end (sent, dead token,
    /// failed, expired).
    public let sent: Int
    public let ended: Int
    /// Event → accepted, over the slice's sent deliveries.
    public let p50Milliseconds: Double?
    public let p95Milliseconds: Double?

    public var successRate: Double? { ended > 0 ? Double(sent) / Double(ended) : nil }
}

extension Store {
    /// A tenant's notifications since `since`, in slices of `bucket`, oldest first; slices
    /// with nothing in them are there too, with zeros. For those who run the tenant
    /// (`AccessPolicy.mayReadStatistics`); anyone else is forbidden.
    public func deliverySeries(viewer: AccessPolicy, tenant: Tenant, since: Date, bucket: Duration) async throws -> [DeliveryBucket] {
        try Self.requireStatisticsReader(viewer)
        let seconds = bucket.timeInterval
        let rows = try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                """
                SELECT date_bin(make_interval(secs => \(seconds)), n.created_at, \(since)) AS slice,
                       count(DISTINCT n.id)::int,
                       (count(d.id) FILTER (WHERE d.status = 'sent'))::int,
                       (count(d.id) FILTER (WHERE d.status IN ('sent', 'dead_token', 'failed', 'expired')))::int,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.sent_at - n.event_at) * 1000) FILTER (WHERE d.status = 'sent'),
                       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM d.sent_at - n.event_at) * 1000) FILTER (WHERE d.status = 'sent')
                FROM notifications n LEFT JOIN deliveries d ON d.tenant_id = n.tenant_id AND d.notification_id = n.id
                WHERE n.tenant_id = \(tenant.id) AND n.created_at >= \(since)
                GROUP BY 1 ORDER BY 1
                """)
        }
        var found: [Int: DeliveryBucket] = [:]
        for row in rows {
            let (start, notifications, sent, ended) = try row.decode((Date, Int, Int, Int).self)
            let index = Int((start.timeIntervalSince(since) / seconds).rounded())
            found[index] = DeliveryBucket(
                start: start, notifications: notifications, sent: sent, ended: ended,
                p50Milliseconds: try row.decode(Double?.self, at: 4), p95Milliseconds: try row.decode(Double?.self, at: 5))
        }
        let count = max(1, Int((Date().timeIntervalSince(since) / seconds).rounded(.up)))
        return (0..<min(count, 1_000)).map { index in
            found[index]
                ?? DeliveryBucket(
                    start: since.addingTimeInterval(Double(index) * seconds), notifications: 0, sent: 0, ended: 0,
                    p50Milliseconds: nil, p95Milliseconds: nil)
        }
    }
}
