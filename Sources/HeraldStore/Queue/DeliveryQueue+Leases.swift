import Foundation
import HeraldPostgres

/// The delivery leases a worker holds: renewed while in hand, given back at shutdown, and
/// taken back from a worker that died or stalled.
extension DeliveryQueue {
    /// Extends the leases this worker holds on `held`, the deliveries it has in hand; a
    /// delivery leased to it that it does not have in hand (its claim committed, the answer
    /// lost) is left to expire and be queued again. (Events are held by the fan-out
    /// transaction's row locks; a large event's lease is renewed by each of its parts.)
    ///
    /// A delivery locked at this moment is being acknowledged, so it is passed by rather than
    /// waited for: waiting row by row behind the acknowledgements, while they in turn waited
    /// for the rows this statement had locked, stalled both for a second at a time (measured
    /// in a burn-down). Should that acknowledgement fail, the next renewal, a third of a lease
    /// later, extends it.
    /// - Returns: the deliveries whose lease it extended.
    @discardableResult
    public func renewLeases(_ held: [UUID]) async throws -> [UUID] {
        guard !held.isEmpty else { return [] }
        let rows = try await pool.query(
            """
            UPDATE deliveries d SET lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            FROM (SELECT tenant_id, notification_id, id FROM deliveries
                  WHERE status = 'sending' AND lease_owner = \(worker) AND id = ANY(\(held)) AND id >= \(window.lower) AND id < \(window.upper)
                  FOR NO KEY UPDATE SKIP LOCKED) held
            WHERE d.tenant_id = held.tenant_id AND d.notification_id = held.notification_id AND d.id = held.id AND d.id >= \(window.lower) AND d.id < \(window.upper)
            RETURNING d.id
            """)
        return try rows.map { try $0.decode(UUID.self, at: 0) }
    }

    /// Puts deliveries whose lease expired (their worker died or stalled) back in the queue,
    /// but for those this worker has in hand (`inHand`): it renews those, and one put back
    /// while its send was on the way would be claimed and sent again.
    /// - Returns: how many.
    public func reclaimExpiredLeases(except inHand: [UUID] = []) async throws -> Int {
        let rows = try await pool.query(
            """
            UPDATE deliveries SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE status = 'sending' AND lease_expires_at < now() AND id >= \(window.lower) AND id < \(window.upper)\(tenantScope: "tenant_id", tenants)
              AND NOT (lease_owner = \(worker) AND id = ANY(\(inHand)))
            """)
        return rows.affectedRows ?? 0
    }

    /// Gives back leases this worker holds but will not finish (at shutdown): deliveries, and
    /// a large event it was fanning out when it was stopped.
    public func releaseLeases() async throws {
        try await pool.query(
            """
            UPDATE deliveries SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE status = 'sending' AND lease_owner = \(worker) AND id >= \(window.lower) AND id < \(window.upper)
            """)
        try await releaseEventLeases()
    }
}
