import Foundation
import HeraldCore
import HeraldPostgres

/// Where a look for due timers continues a burst from: the last timer the batch before it
/// took, in (due time, id) order (`Store.fireDueTimers(at:limit:tenants:after:)`).
public struct TimerCursor: Sendable, Equatable {
    /// The due time as the database wrote it: to the microsecond, which a `Date` may miss.
    public let dueAt: String
    public let id: UUID

    public init(dueAt: String, id: UUID) {
        self.dueAt = dueAt
        self.id = id
    }
}

extension Store {
    /// How long a worker may hold a timer it is firing: the transaction that fires it is
    /// ended by PostgreSQL (and the timer freed for another worker) if it idles this long.
    public static let timerLease = "30s"

    /// Fires the timers due at `now`, oldest first, up to `limit`, each in its own
    /// transaction in its tenant's scope (see `TenantSession.fireTimer`). Any number of
    /// workers may call this at once: each timer fires once.
    ///
    /// A timer whose firing fails with an error its own rows raise (`PostgresError.isDataError`:
    /// it would fail the same way every time, and, oldest first, hold every timer behind it)
    /// is skipped, with the error as its reason, and the others fire.
    /// - Parameter tenants: only these tenants (empty: all).
    /// - Returns: what each timer it took did (timers another worker held are left out).
    public func fireDueTimers(at now: Date = Date(), limit: Int = 100, tenants: [UUID] = []) async throws -> [TimerFiring] {
        try await fireDueTimers(at: now, limit: limit, tenants: tenants, after: nil).firings
    }

    /// `fireDueTimers(at:limit:tenants:)`, looking only past `cursor` in (due time, id) order:
    /// a worker firing a burst a batch at a time passes the last batch's end to the next, so
    /// that no look walks the timers fired before it. (Those stay in the index until vacuum
    /// removes them, and while another session holds a snapshot it cannot: every look of a
    /// burst of 20,000 read them all again. docs/architecture.md.) A timer the burst passed
    /// over (another worker held it, or it was written meanwhile with an earlier due time) is
    /// found by the next look that starts from the beginning, once the burst ends.
    /// - Returns: what each timer did, and where the next look of the burst starts (`nil`
    ///   when this one took none).
    public func fireDueTimers(at now: Date, limit: Int, tenants: [UUID], after cursor: TimerCursor?) async throws -> (
        firings: [TimerFiring], next: TimerCursor?
    ) {
        // Across tenants, as the dispatcher: which are due (a peek; the firing locks each).
        let statement = Self.dueTimers(at: now, limit: limit, tenants: tenants, after: cursor)
        let due = try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(statement).map { try $0.decode((UUID, UUID, String).self) }
        }
        var firings: [TimerFiring] = []
        for (tenantID, id, _) in due {
            let firing: TimerFiring
            do {
                firing = try await withTenantTransaction(
                    tenantID, settings: "SET LOCAL idle_in_transaction_session_timeout = '\(Self.timerLease)'"
                ) { connection, ledger in
                    let tenant = try Self.tenant(
                        try await connection.query("SELECT id, slug, name, created_at FROM tenants WHERE id = \(tenantID)").single())
                    return try await TenantSession(
                        connection: connection, tenant: tenant, logger: logger, ledger: ledger, freshness: deviceFreshness
                    ).fireTimer(id, now: now)
                }
            } catch let error as PostgresError where error.isDataError {
                firing = try await skipTimer(id, tenant: tenantID, because: error)
            }
            if firing != .notDue { firings.append(firing) }
        }
        return (firings, due.last.map { TimerCursor(dueAt: $0.2, id: $0.1) })
    }

    /// The statement `fireDueTimers` looks for due timers with (tests look at its plan).
    static func dueTimers(at now: Date, limit: Int, tenants: [UUID], after cursor: TimerCursor?) -> PostgresQuery {
        // (The due time's text is named apart: as `due_at`, the ORDER BY would sort by it.)
        if let cursor {
            """
            SELECT tenant_id, id, due_at::text AS due FROM activity_timers
            WHERE status = 'pending' AND due_at <= \(now) AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
              AND (due_at, id) > (\(cursor.dueAt)::timestamptz, \(cursor.id))
            ORDER BY due_at, id LIMIT \(limit)
            """
        } else {
            """
            SELECT tenant_id, id, due_at::text AS due FROM activity_timers
            WHERE status = 'pending' AND due_at <= \(now) AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
            ORDER BY due_at, id LIMIT \(limit)
            """
        }
    }

    /// Settles a pending timer as skipped, its firing's error as the reason.
    private func skipTimer(_ id: UUID, tenant: UUID, because error: PostgresError) async throws -> TimerFiring {
        let reason = "could not be fired: \(String(error.description.prefix(400)))"
        logger.error("skipping a timer whose firing fails", metadata: ["timer": "\(id)", "tenant": "\(tenant)", "error": "\(error)"])
        let kind = try await withTenantTransaction(tenant) { connection, _ in
            try await connection.query(
                """
                UPDATE activity_timers SET status = 'skipped', reason = \(reason), settled_at = now()
                WHERE tenant_id = \(tenant) AND id = \(id) AND status = 'pending'
                RETURNING kind
                """
            ).first.map { try $0.decode(String.self, at: 0) }
        }
        guard let kind, let timerKind = TimerKind(rawValue: kind) else { return .notDue }
        return .skipped(timerKind, reason: reason)
    }

    /// Whether a timer falls due within `horizon` of now (a draining worker waits for it).
    public func hasTimers(dueWithin horizon: Duration, tenants: [UUID] = []) async throws -> Bool {
        try await pool.withTransaction(setup: DatabaseRole.dispatcher.forTransaction) { connection in
            try await connection.query(
                """
                SELECT EXISTS (SELECT FROM activity_timers
                               WHERE status = 'pending' AND due_at <= now() + make_interval(secs => \(horizon.timeInterval))
                                 AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
                """
            ).single().decode(Bool.self, at: 0)
        }
    }
}
