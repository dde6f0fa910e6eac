import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Locks up to `limit` events that are not fanned out yet, oldest first, for the rest of
    /// the transaction on `connection` (which works as `herald_dispatcher`). Another worker
    /// skips them; if this one dies, its transaction ends and they are free again. Events
    /// under a live lease (a large event another worker is fanning out in parts) are skipped.
    /// The recipients of events of up to `part` recipients are read with them.
    ///
    /// It runs on a plan made once per connection (the dispatcher's sessions plan for the
    /// values, for the statements that name history's live partitions; the outbox has none):
    /// planned every time, the claim spent 0.23 ms planning for 0.06 ms of work, at every
    /// event of a steady stream. Sequential scans are off for it, as for the rest of fan-out
    /// (`FanOutTransaction.enterScope`): made while the outbox was empty by its statistics, that
    /// plan read the whole outbox at every claim (1,466 buffers for one event after 6,000, in
    /// `herald bench latency`'s slow runs: BENCHMARKS.md).
    func claimEvents(limit: Int, part: Int, on connection: PostgresConnection) async throws -> [ClaimedEvent] {
        connection.deferScript(Store.plannedOnceOnIndexes)
        let rows = try await connection.query(
            """
            -- A leased event is being fanned out part by part by the lease holder (a large
            -- group's message): it is left alone until the lease expires.
            -- The snapshot comes without its recipients, and the recipients of a small event
            -- as two arrays of text, in their order. Nothing here can fail on a snapshot this
            -- version cannot read (that would stop the queue): the fan-out reports such an
            -- event and passes it over.
            -- (Every mention of `o.payload` reads the whole of it again from its compressed
            -- copy: it is read once, in subqueries the planner keeps apart, and the list
            -- taken out of that copy.)
            SELECT o.tenant_id, o.id, o.kind, o.occurred_at,
                   (CASE WHEN jsonb_typeof(r.payload) = 'object' THEN (r.payload - 'recipients') || '{"recipients": []}' ELSE r.payload END)::text AS payload,
                   CASE WHEN jsonb_typeof(r.list) = 'array' THEN jsonb_array_length(r.list) END AS recipient_count,
                   CASE WHEN jsonb_typeof(r.list) = 'array' AND jsonb_array_length(r.list) <= \(part) THEN ARRAY(
                       SELECT e ->> 'id' FROM jsonb_array_elements(r.list) WITH ORDINALITY AS x(e, n) ORDER BY n)
                   END AS recipient_ids,
                   CASE WHEN jsonb_typeof(r.list) = 'array' AND jsonb_array_length(r.list) <= \(part) THEN ARRAY(
                       SELECT e ->> 'app' FROM jsonb_array_elements(r.list) WITH ORDINALITY AS x(e, n) ORDER BY n)
                   END AS recipient_apps
            FROM outbox o
            CROSS JOIN LATERAL (
                SELECT d.payload, d.payload -> 'recipients' AS list
                FROM (SELECT o.payload || '{}'::jsonb AS payload OFFSET 0) d
                OFFSET 0) r
            WHERE fanned_out_at IS NULL AND seq >= \(outboxFloor.value)
              AND (lease_expires_at IS NULL OR lease_expires_at < now())\(tenantScope: "tenant_id", tenants)
            ORDER BY seq LIMIT \(limit)
            FOR UPDATE OF o SKIP LOCKED
            """)
        return try rows.map { row in
            let (tenantID, id, kind, occurredAt, payload) = try row.decode((UUID, UUID, String, Date, String).self)
            let count = try row.decode(Int?.self, column: "recipient_count")
            let ids = try row.decode([String?]?.self, column: "recipient_ids")
            let apps = try row.decode([String?]?.self, column: "recipient_apps")
            return ClaimedEvent(
                tenantID: tenantID, id: id, kind: kind, payload: payload, recipientCount: count,
                recipients: Self.recipients(ids: ids, apps: apps), occurredAt: occurredAt)
        }
    }

    /// Recipients from their ids and apps as text; `nil` if any cannot be read.
    static func recipients(ids: [String?]?, apps: [String?]?) -> [EventRecipient]? {
        guard let ids, let apps, ids.count == apps.count else { return nil }
        var recipients: [EventRecipient] = []
        recipients.reserveCapacity(ids.count)
        for (id, app) in zip(ids, apps) {
            guard let id, let app, let person = try? UUID(postgresText: id, type: .unspecified), let app = AppKind(rawValue: app) else {
                return nil
            }
            recipients.append(EventRecipient(id: person, app: app))
        }
        return recipients
    }

    /// Holds events for this worker (in the tenant's scope) for one lease: other workers'
    /// claims pass them by until it expires; each part of a large event's fan-out renews it.
    func leaseEvents(_ events: [UUID], tenant: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE outbox SET lease_owner = \(worker), lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE tenant_id = \(tenant) AND id = ANY(\(events))
            """)
    }

    /// Locks the event for the rest of the transaction if this worker still holds its lease
    /// and it is not done (`held` is false when its lease passed to another worker), and
    /// reads the recipients of its `part`, in order (`nil` if any cannot be read). The lock
    /// is `FOR KEY SHARE`: other workers' claims pass the event by, while this worker's other
    /// parts of it, written at the same time, hold it too and renew its lease.
    func holdEventPart(
        _ event: UUID, tenant: UUID, part: Range<Int>, on connection: PostgresConnection
    ) async throws -> (held: Bool, recipients: [EventRecipient]?) {
        let rows = try await connection.query(
            """
            -- The list read once (see `claimEvents`), its part's elements by position.
            SELECT CASE WHEN jsonb_typeof(r.list) = 'array' THEN ARRAY(
                       SELECT r.list -> i::int ->> 'id' FROM generate_series(\(part.lowerBound), \(part.upperBound - 1)) i ORDER BY i)
                   END,
                   CASE WHEN jsonb_typeof(r.list) = 'array' THEN ARRAY(
                       SELECT r.list -> i::int ->> 'app' FROM generate_series(\(part.lowerBound), \(part.upperBound - 1)) i ORDER BY i)
                   END
            FROM outbox o CROSS JOIN LATERAL (SELECT o.payload -> 'recipients' AS list OFFSET 0) r
            WHERE o.tenant_id = \(tenant) AND o.id = \(event) AND o.lease_owner = \(worker) AND o.fanned_out_at IS NULL AND o.seq >= \(outboxFloor.value)
            FOR KEY SHARE OF o
            """)
        guard let row = rows.first else { return (false, nil) }
        let (ids, apps) = try row.decode(([String?]?, [String?]?).self)
        let recipients = Self.recipients(ids: ids, apps: apps)
        return (true, recipients?.count == part.count ? recipients : nil)
    }

    /// Counts a failure against each of these events, with its error; an event that reaches
    /// `limit` failures is passed over: marked fanned out (what was written of it before
    /// stays) with `passed_over_at`, and its lease given back. Runs on `connection` (no
    /// tenant scope needed: the dispatcher's policies see every tenant's outbox).
    /// - Returns: the events passed over now.
    @discardableResult
    func recordFanOutFailures(
        _ failures: [(tenant: UUID, event: UUID, error: String)], limit: Int, on connection: PostgresConnection
    ) async throws -> [UUID] {
        let rows = try await connection.query(
            """
            -- (Each expression reads the row as it was.)
            UPDATE outbox o
            SET fan_out_failures = o.fan_out_failures + 1, fan_out_error = f.error,
                passed_over_at = CASE WHEN o.fan_out_failures + 1 >= \(limit) THEN now() END,
                fanned_out_at = CASE WHEN o.fan_out_failures + 1 >= \(limit) THEN now() END,
                lease_owner = CASE WHEN o.fan_out_failures + 1 >= \(limit) THEN NULL ELSE o.lease_owner END,
                lease_expires_at = CASE WHEN o.fan_out_failures + 1 >= \(limit) THEN NULL ELSE o.lease_expires_at END
            FROM unnest(\(failures.map(\.tenant))::uuid[], \(failures.map(\.event))::uuid[], \(failures.map(\.error))::text[])
                AS f(tenant_id, id, error)
            WHERE o.tenant_id = f.tenant_id AND o.id = f.id AND o.fanned_out_at IS NULL AND o.seq >= \(outboxFloor.value)
            RETURNING o.id, o.passed_over_at IS NOT NULL
            """)
        return try rows.compactMap { row in
            let (id, passed) = try row.decode((UUID, Bool).self)
            return passed ? id : nil
        }
    }

    /// Gives back the events this worker leased and has not finished fanning out, so that any
    /// worker may take them at once rather than when the lease runs out.
    public func releaseEventLeases() async throws {
        try await pool.query(
            """
            UPDATE outbox SET lease_owner = NULL, lease_expires_at = NULL
            WHERE fanned_out_at IS NULL AND lease_owner = \(worker) AND seq >= \(outboxFloor.value)
            """)
    }
}
