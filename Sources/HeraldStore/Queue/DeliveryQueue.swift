import Foundation
import HeraldCore
import HeraldPostgres

/// The outbox and the delivery queue, in SQL. Every statement is one round trip; claims and
/// acknowledgements are set-based over whole batches.
///
/// Runs on a pool whose connections work as `herald_dispatcher` (which sees the queue
/// tables of every tenant); fan-out switches to the tenant's own scope.
public struct DeliveryQueue: Sendable {
    let pool: PostgresPool
    let worker: String
    let lease: Duration
    /// Only these tenants, or all when empty.
    let tenants: [UUID]
    /// When devices go stale (the store's): fan-out sends nothing to a stale one.
    let freshness: DeviceFreshness
    /// Where deliveries still to send lie (`refreshWindow()`).
    let window = LiveWindow()
    /// Where events still to fan out begin (`refreshWindow()`).
    let outboxFloor = QueueFloor()

    /// The queue as `worker` works it, on `store`'s pool (which must work as
    /// `herald_dispatcher`: `Store.withDispatcherPool`), leasing for `lease`, for `tenants`
    /// only (all when empty).
    public init(store: Store, worker: String, lease: Duration, tenants: [UUID]) {
        self.pool = store.pool
        self.worker = worker
        self.lease = lease
        self.tenants = tenants
        self.freshness = store.deviceFreshness
    }

    /// Where a worker that fanned out more deliveries than it can send at once tells the
    /// others (the payload is the tenant's id).
    public static let deliveriesChannel = "herald_deliveries"

    /// `herald_queue_depth`'s states.
    public enum State: String, CaseIterable, Sendable {
        case due, leased, deferred, timers
    }

    var leaseSeconds: Double { lease.timeInterval }

    /// How deep the queue is, across tenants: deliveries due now, being sent (leased), and
    /// queued for later (a retry's backoff, quiet hours), and pending timers.
    public func depth() async throws -> [State: Int] {
        let (due, leased, deferred, timers) = try await pool.query(
            """
            WITH leased AS MATERIALIZED (
                -- Being sent: what the leases name (with, for the moment it takes, a settled
                -- delivery of a batch not finished yet).
                SELECT m.id FROM delivery_leases l CROSS JOIN LATERAL unnest(l.deliveries) m(id)
            )
            SELECT (SELECT count(*) FROM deliveries
                    WHERE status = 'queued' AND due_at <= now() AND id >= \(window.lower) AND id < \(window.upper)
                      AND id NOT IN (SELECT id FROM leased)),
                   (SELECT count(*) FROM leased),
                   (SELECT count(*) FROM deliveries WHERE status = 'queued' AND due_at > now() AND id >= \(window.lower) AND id < \(window.upper)),
                   (SELECT count(*) FROM activity_timers WHERE status = 'pending')
            """
        ).single().decode((Int, Int, Int, Int).self)
        return [.due: due, .leased: leased, .deferred: deferred, .timers: timers]
    }

    /// Deliveries queued or being sent plus events not fanned out.
    public func remaining() async throws -> Int {
        try await pool.query(
            """
            SELECT (SELECT count(*) FROM deliveries
                    WHERE status IN ('queued', 'sending') AND id >= \(window.lower) AND id < \(window.upper)\(tenantScope: "tenant_id", tenants))
                 + (SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL AND seq >= \(outboxFloor.value)\(tenantScope: "tenant_id", tenants))
            """
        ).single().decode(Int.self, at: 0)
    }

    /// Whether anything is left for a drain: events to fan out, deliveries due within
    /// `horizon`, or deliveries someone is sending.
    /// Deliveries of the providers in `paused` (this worker's configuration pauses) do not count.
    public func hasWork(within horizon: Duration, paused: [PushProvider] = []) async throws -> Bool {
        try await pool.query(
            """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE fanned_out_at IS NULL AND seq >= \(outboxFloor.value)\(tenantScope: "tenant_id", tenants))
                OR EXISTS (SELECT 1 FROM deliveries
                           WHERE id >= \(window.lower) AND id < \(window.upper) AND (status = 'sending'
                                  OR (status = 'queued' AND due_at <= now() + make_interval(secs => \(horizon.timeInterval))
                                      AND NOT provider = ANY(\(paused.map(\.rawValue))::text[])))\(tenantScope: "tenant_id", tenants))
            """
        ).single().decode(Bool.self, at: 0)
    }
}
