import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Locks up to `limit` events that are not fanned out yet, oldest first, for the rest of
    /// the transaction on `connection` (which works as `herald_dispatcher`). Another worker
    /// skips them; if this one dies, its transaction ends and they are free again. Events
    /// under a live lease (a large event another worker is fanning out in parts) are skipped.
    func claimEvents(limit: Int, on connection: PostgresConnection) async throws -> [ClaimedEvent] {
        let rows = try await connection.query(
            """
            -- A leased event is being fanned out part by part by the lease holder (a large
            -- group's message): it is left alone until the lease expires.
            SELECT tenant_id, id, kind, payload::text, occurred_at FROM outbox
            WHERE fanned_out_at IS NULL AND (lease_expires_at IS NULL OR lease_expires_at < now())
              AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
            ORDER BY seq LIMIT \(limit)
            FOR UPDATE SKIP LOCKED
            """)
        return try rows.map { row in
            let (tenantID, id, kind, payload, occurredAt) = try row.decode((UUID, UUID, String, String, Date).self)
            return ClaimedEvent(tenantID: tenantID, id: id, kind: kind, payload: payload, occurredAt: occurredAt)
        }
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
    /// and it is not done; `false` when its lease passed to another worker.
    func holdsEvent(_ event: UUID, tenant: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query(
            """
            SELECT 1 FROM outbox
            WHERE tenant_id = \(tenant) AND id = \(event) AND lease_owner = \(worker) AND fanned_out_at IS NULL
            FOR UPDATE
            """
        ).count == 1
    }

    /// Gives back the events this worker leased and has not finished fanning out, so that any
    /// worker may take them at once rather than when the lease runs out.
    func releaseEventLeases() async throws {
        try await pool.query(
            """
            UPDATE outbox SET lease_owner = NULL, lease_expires_at = NULL
            WHERE fanned_out_at IS NULL AND lease_owner = \(worker)
            """)
    }
}
