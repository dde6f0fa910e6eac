import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// The tenant's reminder policy (the defaults until an admin sets one).
    public func policy() async throws -> ReminderPolicy {
        let rows = try await connection.query("SELECT policy::text AS policy FROM tenant_policies WHERE tenant_id = \(tenantID)")
        return try rows.first.map { try Self.policy($0, column: "policy") } ?? .defaults
    }

    /// What `setPolicy` did to the timers of the activities waiting now.
    public struct PolicyChange: Sendable, Equatable {
        public let policy: ReminderPolicy
        /// Pending timers written or moved to the new intervals.
        public let scheduled: Int
        /// Pending timers the policy turned off.
        public let cancelled: Int
    }

    /// Replaces the tenant's policy (admins only) and applies it to what waits now: an
    /// activity waiting for approval is reminded the new interval after its completion
    /// request (at once, if that has passed), an assignment or a request for approval waits to
    /// be opened the new interval after it was made, a turned-off reminder is cancelled, and a
    /// reminder already sent for the current wait is not sent again.
    /// - Parameter actor: the admin; `nil` for the tenant's backend (a tenant key, which the
    ///   caller has checked).
    /// - Throws: `StoreError.forbidden` for anyone but an admin.
    public func setPolicy(_ policy: ReminderPolicy, by actor: Person?) async throws -> PolicyChange {
        if let actor, !AccessPolicy(actor).runsTheTenant {
            throw StoreError(.forbidden, "\(actor.email) may not change the policy of tenant \(tenant.slug): only an admin may")
        }
        try await connection.query(
            """
            INSERT INTO tenant_policies (tenant_id, policy, updated_by, updated_at)
            VALUES (\(tenantID), \(PostgresJSON(policy))::jsonb, \(actor?.id), now())
            ON CONFLICT (tenant_id) DO UPDATE SET policy = EXCLUDED.policy, updated_by = EXCLUDED.updated_by, updated_at = now()
            """)
        let planned = try await plannedTimers(policy)
        let counts = try await connection.query(
            """
            WITH plan AS (
                SELECT * FROM unnest(\(planned.map(\.activity))::uuid[], \(planned.map(\.timer.kind.rawValue))::text[],
                                     \(planned.map(\.timer.period))::int[], \(planned.map(\.timer.dueAt))::timestamptz[],
                                     \(planned.map(\.since))::timestamptz[])
                    AS p(activity_id, kind, period, due_at, waiting_since)
            ), off AS (
                UPDATE activity_timers t SET status = 'cancelled', reason = 'turned off by the tenant''s policy', settled_at = now()
                WHERE t.tenant_id = \(tenantID) AND t.status = 'pending'
                  AND NOT EXISTS (SELECT FROM plan p WHERE p.activity_id = t.activity_id AND p.kind = t.kind AND p.period = t.period)
                RETURNING 1
            ), scheduled AS (
                INSERT INTO activity_timers (tenant_id, id, activity_id, kind, period, due_at, waiting_since)
                SELECT \(tenantID), gen_random_uuid(), p.activity_id, p.kind, p.period, p.due_at, p.waiting_since FROM plan p
                ON CONFLICT ON CONSTRAINT activity_timers_once DO UPDATE
                    SET due_at = EXCLUDED.due_at, status = 'pending', reason = NULL, settled_at = NULL
                    WHERE activity_timers.status IN ('pending', 'cancelled')
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM scheduled), (SELECT count(*) FROM off)
            """
        ).single().decode((Int, Int).self)
        if counts.0 > 0 {
            // A timer now due at once: wake the workers rather than wait for their next look.
            try await connection.query("SELECT pg_notify(\(Store.outboxChannel), \(tenantID.lowercasedString))")
        }
        return PolicyChange(policy: policy, scheduled: counts.0, cancelled: counts.1)
    }

    /// `setPolicy` by email (the CLI).
    public func setPolicy(_ policy: ReminderPolicy, actor email: String) async throws -> PolicyChange {
        try await setPolicy(policy, by: try await person(email: email))
    }

    /// The timers `policy` gives every activity not yet approved: the approval wait of those
    /// waiting for approval, the wait to be opened of those assigned or waiting for approval,
    /// and the deadline timers due after their assignment.
    private func plannedTimers(_ policy: ReminderPolicy) async throws -> [(activity: UUID, timer: PlannedTimer, since: Date)] {
        let rows = try await connection.query(
            """
            SELECT a.id, a.status, a.version, a.priority, a.deadline::text, a.created_at, a.updated_at, s.time_zone
            FROM activities a JOIN people s ON s.tenant_id = a.tenant_id AND s.id = a.assignee_id
            WHERE a.tenant_id = \(tenantID) AND a.status <> 'approved'
            """)
        var planned: [(activity: UUID, timer: PlannedTimer, since: Date)] = []
        for row in rows {
            let (id, status, version, priority, deadline, createdAt, updatedAt, zone) =
                try row.decode((UUID, String, Int, String, String, Date, Date, String).self)
            let activityStatus: ActivityStatus = try Self.decodeEnum(status)
            let activityPriority: Priority = try Self.decodeEnum(priority)
            for timer in ActivityTimers.approvalTimers(
                enteringStatus: activityStatus, version: version, at: updatedAt, priority: activityPriority, policy: policy)
                + ActivityTimers.unopenedTimers(
                    enteringStatus: activityStatus, version: version, at: updatedAt, priority: activityPriority, policy: policy)
            {
                planned.append((id, timer, updatedAt))
            }
            guard let date = LocalDate(deadline) else { continue }
            for timer in ActivityTimers.deadlineTimers(deadline: date, timeZone: TimeZone.named(zone), policy: policy)
            where timer.dueAt > createdAt {
                planned.append((id, timer, createdAt))
            }
        }
        return planned
    }

    /// The policy a query read as JSON text in `column` (`NULL`: the defaults).
    static func policy(_ row: PostgresRow, column: String) throws -> ReminderPolicy {
        guard let text = try row.decode(String?.self, column: column) else { return .defaults }
        do {
            return try JSONDecoder().decode(ReminderPolicy.self, from: Data(text.utf8))
        } catch {
            throw PostgresError(kind: .decoding, message: "the tenant's policy in the database cannot be read: \(error)")
        }
    }
}
