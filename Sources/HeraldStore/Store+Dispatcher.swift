import Foundation
import HeraldPostgres

extension Store {
    /// A store on a pool of `size` connections of its own, on the same database, working as
    /// `herald_dispatcher` and planning each statement for its values, for a dispatcher's
    /// queue (`DeliveryQueue`), timers and history upkeep; the pool is closed when `body`
    /// ends. (The queue's statements name the live window of history's week partitions;
    /// planned for their values, only those partitions are planned. A generic plan covers
    /// every partition, and PostgreSQL makes one again after each ANALYZE of the busy tables
    /// to compare: 100 ms with 90 days of history.)
    public func withDispatcherPool<Result>(size: Int, _ body: (Store) async throws -> Result) async throws -> Result {
        let configuration = pool.configuration.with(
            sessionSetup: DatabaseRole.dispatcher.forSession + "; SET plan_cache_mode = force_custom_plan")
        let pool = PostgresPool(configuration: configuration, size: size, trouble: pool.trouble, logger: logger)
        return try await pool.closing { pool in
            try await body(Store(pool: pool, logger: logger, deviceFreshness: deviceFreshness, notifier: notifier))
        }
    }
}

extension Store {
    /// A store on a pool of `size` connections of its own, on the same database and with the
    /// same setup, closed when `body` ends: for background work that must not take the
    /// connections requests wait for (the live channel's loops).
    public func withPoolOfItsOwn<Result>(size: Int, _ body: (Store) async throws -> Result) async throws -> Result {
        let pool = PostgresPool(configuration: pool.configuration, size: size, trouble: pool.trouble, logger: logger)
        return try await pool.closing { pool in
            try await body(Store(pool: pool, logger: logger, deviceFreshness: deviceFreshness, notifier: notifier))
        }
    }
}
