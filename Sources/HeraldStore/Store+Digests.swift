import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTemplates

extension Store {
    /// Closes the digests due at `now`, oldest first, up to `limit`, each in its own
    /// transaction in its tenant's scope (see `TenantSession.closeDigest`). Any number of
    /// workers may call this at once: each digest is closed once, and its push written once.
    /// - Parameters:
    ///   - deadline: how long the digest's deliveries may be tried.
    ///   - wording: how its push is worded (HeraldDispatch's, which words every push).
    ///   - tenants: only these tenants (empty: all).
    ///   - email: whether the caller can send email (a digest the person chose by email goes so).
    /// - Returns: what each digest it took did (digests another worker held are left out).
    public func closeDueDigests(
        at now: Date = Date(), limit: Int = 100, deadline: Duration, templates: TemplateCatalog, tenants: [UUID] = [],
        email: Bool = false, wording: DigestWording
    ) async throws -> [DigestClosing] {
        // Across tenants, as the timers: which are due (a peek; the closing locks each).
        let due = try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                """
                SELECT tenant_id, id FROM digests
                WHERE status IN ('open', 'due') AND closes_at <= \(now) AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
                ORDER BY closes_at LIMIT \(limit)
                """
            ).map { try $0.decode((UUID, UUID).self) }
        }
        var closings: [DigestClosing] = []
        for (tenantID, id) in due {
            let closing = try await withTenantTransaction(
                tenantID, settings: "SET LOCAL idle_in_transaction_session_timeout = '\(Self.timerLease)'"
            ) { connection, ledger in
                let tenant = try Self.tenant(
                    try await connection.query("SELECT id, slug, name, created_at FROM tenants WHERE id = \(tenantID)").single())
                return try await TenantSession(connection: connection, tenant: tenant, logger: logger, ledger: ledger, freshness: deviceFreshness)
                    .closeDigest(id, now: now, deadline: deadline, templates: templates, email: email, wording: wording)
            }
            if closing != .notDue { closings.append(closing) }
        }
        return closings
    }
}

extension Store {
    /// Whether a digest falls due within `horizon` of now (a draining worker waits for it).
    public func hasDigests(dueWithin horizon: Duration, tenants: [UUID] = []) async throws -> Bool {
        try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                """
                SELECT EXISTS (SELECT FROM digests
                               WHERE status IN ('open', 'due') AND closes_at <= now() + make_interval(secs => \(horizon.timeInterval))
                                 AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
                """
            ).single().decode(Bool.self, at: 0)
        }
    }
}
