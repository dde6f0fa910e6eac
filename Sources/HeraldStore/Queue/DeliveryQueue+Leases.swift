import Foundation
import HeraldPostgres

/// The delivery leases a worker holds: renewed while in hand, given back at shutdown, and
/// taken back from a worker that died or stalled.
extension DeliveryQueue {
    /// Extends the leases this worker holds on `held`, the deliveries it has in hand: each
    /// lease (a claimed batch, `delivery_leases`) with any of them in it. A lease it does not
    /// have in hand (its claim committed, the answer lost) is left to run out. (Events are held
    /// by the fan-out transaction's row locks; a large event's lease is renewed by each of its
    /// parts.)
    ///
    /// A lease locked at this moment is being removed with its batch's last outcome, so it
    /// is passed by rather than waited for.
    /// - Returns: the deliveries whose lease it extended.
    @discardableResult
    public func renewLeases(_ held: [UUID]) async throws -> [UUID] {
        guard !held.isEmpty else { return [] }
        let rows = try await pool.query(
            """
            WITH held AS (
                SELECT tenant_id, id FROM delivery_leases
                WHERE worker = \(worker) AND deliveries && \(held)::uuid[]
                FOR NO KEY UPDATE SKIP LOCKED
            ), renewed AS (
                UPDATE delivery_leases l SET expires_at = now() + make_interval(secs => \(leaseSeconds))
                FROM held WHERE l.tenant_id = held.tenant_id AND l.id = held.id
                RETURNING l.deliveries
            )
            SELECT m.id FROM renewed r CROSS JOIN LATERAL unnest(r.deliveries) m(id) WHERE m.id = ANY(\(held)::uuid[])
            """)
        return try rows.map { try $0.decode(UUID.self, at: 0) }
    }

    /// Takes back the leases that ran out (their worker died or stalled), but for those with a
    /// delivery this worker has in hand (`inHand`): it renews those, and one taken back while
    /// its send was on the way would be claimed and sent again. A delivery still as it was
    /// claimed counts the attempt its worker was making (one that kills its worker every time
    /// runs out of attempts instead of being sent for ever).
    /// - Returns: how many deliveries went back to the queue.
    public func reclaimExpiredLeases(except inHand: [UUID] = []) async throws -> Int {
        try await pool.query(
            """
            WITH expired AS (
                DELETE FROM delivery_leases l
                WHERE l.expires_at < now()\(tenantScope: "l.tenant_id", tenants)
                  AND NOT (l.worker = \(worker) AND l.deliveries && \(inHand)::uuid[])
                RETURNING l.tenant_id, l.deliveries, l.notifications, l.attempts
            ), counted AS (
                UPDATE deliveries d SET attempts = d.attempts + 1, first_attempt_at = coalesce(d.first_attempt_at, now()), updated_at = now()
                FROM expired e CROSS JOIN LATERAL unnest(e.deliveries, e.notifications, e.attempts) m(id, notification_id, attempts)
                WHERE d.tenant_id = e.tenant_id AND d.notification_id = m.notification_id AND d.id = m.id
                  AND d.status = 'queued' AND d.attempts = m.attempts AND d.id >= \(window.lower) AND d.id < \(window.upper)
                RETURNING 1
            ), before AS (
                -- Leased the way versions before 0044 did (the delivery marked `sending`).
                UPDATE deliveries SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
                WHERE status = 'sending' AND lease_expires_at < now() AND id >= \(window.lower) AND id < \(window.upper)\(tenantScope: "tenant_id", tenants)
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM counted) + (SELECT count(*) FROM before)
            """
        ).single().decode(Int.self, at: 0)
    }

    /// Gives back leases this worker holds but will not finish (at shutdown): deliveries, and
    /// a large event it was fanning out when it was stopped. The deliveries are as they were
    /// claimed: nothing was sent of them.
    public func releaseLeases() async throws {
        try await pool.query("DELETE FROM delivery_leases WHERE worker = \(worker)")
        try await releaseEventLeases()
    }
}
