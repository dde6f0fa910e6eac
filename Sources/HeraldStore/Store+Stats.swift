import Foundation
import HeraldCore
import HeraldPostgres

/// What the dispatcher has done, per tenant (`herald stats`).
public struct DispatchStats: Sendable, Codable, Equatable {
    public struct Latency: Sendable, Codable, Equatable {
        public let p50Milliseconds: Double
        public let p95Milliseconds: Double
        public let p99Milliseconds: Double
        public let maxMilliseconds: Double
    }

    public struct TenantStats: Sendable, Codable, Equatable {
        public let tenant: String
        /// Notifications: event → status → count.
        public let notifications: [String: [String: Int]]
        /// Deliveries (one per device): status → count.
        public let deliveries: [String: Int]
        /// Sent deliveries over those that reached an end (sent, dead token, failed, expired).
        public let successRate: Double?
        /// From the event's commit to the provider's acceptance, over sent deliveries.
        public let latency: Latency?
        /// Devices the providers reported dead in the period.
        public let deadTokens: Int
    }

    /// A provider one worker holds back (its configuration failed, or the endpoint does not
    /// answer); other workers keep sending.
    public struct Pause: Sendable, Codable, Equatable {
        public let provider: String
        public let worker: String
        public let reason: String
        public let since: Date
        public let until: Date
    }

    public let since: Date?
    public let tenants: [TenantStats]
    /// Providers whose configuration is wrong: nothing is sent to them until fixed.
    public let pausedProviders: [Pause]
    /// Deliveries due now, waiting for a retry, and being sent.
    public let queue: [String: Int]
}

extension Store {
    /// One tenant's counts since a time (or ever), for `viewer` of that tenant: those who run
    /// it (`AccessPolicy.mayReadStatistics`); anyone else is forbidden.
    public func tenantStats(viewer: AccessPolicy, tenant: Tenant, since: Date?) async throws -> DispatchStats {
        try Self.requireStatisticsReader(viewer)
        return try await dispatchStats(since: since, tenant: tenant.slug)
    }

    /// `AccessPolicy.mayReadStatistics`.
    static func requireStatisticsReader(_ viewer: AccessPolicy) throws {
        guard viewer.mayReadStatistics else { throw StoreError(.forbidden, "only a tenant admin or a tenant key may read the tenant's statistics") }
    }

    /// Counts across tenants (or one), since a time (or ever). An operator's view: it reads
    /// the queue tables as the dispatcher does and names no person.
    public func dispatchStats(since: Date?, tenant slug: String?) async throws -> DispatchStats {
        var tenantID: UUID?
        if let slug { tenantID = try await tenant(slug: slug).id }
        return try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            var notifications: [String: [String: [String: Int]]] = [:]
            for row in try await connection.query(
                """
                SELECT t.slug, o.kind, o.status, count(*)::int
                FROM notification_outcomes o JOIN tenants t ON t.id = o.tenant_id
                WHERE (\(since)::timestamptz IS NULL OR o.created_at >= \(since)) AND (\(tenantID)::uuid IS NULL OR o.tenant_id = \(tenantID))
                GROUP BY 1, 2, 3
                """)
            {
                let (tenant, kind, status, count) = try row.decode((String, String, String, Int).self)
                notifications[tenant, default: [:]][kind, default: [:]][status] = count
            }
            var deliveries: [String: [String: Int]] = [:]
            var latency: [String: DispatchStats.Latency] = [:]
            for row in try await connection.query(
                """
                SELECT t.slug, d.status, count(*)::int,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.sent_at - n.event_at) * 1000),
                       percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM d.sent_at - n.event_at) * 1000),
                       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.sent_at - n.event_at) * 1000),
                       max(extract(epoch FROM d.sent_at - n.event_at) * 1000)::float8
                FROM deliveries d
                JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                JOIN tenants t ON t.id = d.tenant_id
                WHERE (\(since)::timestamptz IS NULL OR n.created_at >= \(since)) AND (\(tenantID)::uuid IS NULL OR d.tenant_id = \(tenantID))
                GROUP BY 1, 2
                """)
            {
                let (tenant, status, count) = try row.decode((String, String, Int).self)
                deliveries[tenant, default: [:]][status] = count
                if status == "sent", let p50 = try row.decode(Double?.self, at: 3), let p95 = try row.decode(Double?.self, at: 4),
                    let p99 = try row.decode(Double?.self, at: 5), let max = try row.decode(Double?.self, at: 6)
                {
                    latency[tenant] = .init(p50Milliseconds: p50, p95Milliseconds: p95, p99Milliseconds: p99, maxMilliseconds: max)
                }
            }
            var dead: [String: Int] = [:]
            for row in try await connection.query(
                """
                SELECT t.slug, count(*)::int FROM devices v JOIN tenants t ON t.id = v.tenant_id
                WHERE v.deactivated_at IS NOT NULL AND (\(since)::timestamptz IS NULL OR v.deactivated_at >= \(since))
                  AND (\(tenantID)::uuid IS NULL OR v.tenant_id = \(tenantID))
                GROUP BY 1
                """)
            {
                let (tenant, count) = try row.decode((String, Int).self)
                dead[tenant] = count
            }
            let pauses = try await connection.query(
                "SELECT provider, worker, reason, paused_at, until FROM provider_pauses WHERE until > now() ORDER BY provider, worker"
            ).map { row in
                let (provider, worker, reason, since, until) = try row.decode((String, String, String, Date, Date).self)
                return DispatchStats.Pause(provider: provider, worker: worker, reason: reason, since: since, until: until)
            }
            let queueRow = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE status = 'queued' AND due_at <= now() AND NOT herald_delivery_leased(tenant_id, id))::int,
                       count(*) FILTER (WHERE status = 'queued' AND due_at > now())::int,
                       -- Being sent: under a worker's lease (`delivery_leases`).
                       count(*) FILTER (WHERE status = 'sending' OR status = 'queued' AND herald_delivery_leased(tenant_id, id))::int
                FROM deliveries WHERE status IN ('queued', 'sending') AND (\(tenantID)::uuid IS NULL OR tenant_id = \(tenantID))
                """
            ).single()
            let (due, scheduled, sending) = try queueRow.decode((Int, Int, Int).self)

            let slugs = Set(notifications.keys).union(deliveries.keys).union(dead.keys).sorted()
            let tenants = slugs.map { slug in
                let counts = deliveries[slug] ?? [:]
                let ended = ["sent", "dead_token", "failed", "expired"].reduce(0) { $0 + (counts[$1] ?? 0) }
                return DispatchStats.TenantStats(
                    tenant: slug, notifications: notifications[slug] ?? [:], deliveries: counts,
                    successRate: ended > 0 ? Double(counts["sent"] ?? 0) / Double(ended) : nil, latency: latency[slug],
                    deadTokens: dead[slug] ?? 0)
            }
            return DispatchStats(
                since: since, tenants: tenants, pausedProviders: pauses, queue: ["due": due, "retrying": scheduled, "sending": sending])
        }
    }
}
