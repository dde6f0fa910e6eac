import Foundation
import HeraldCore
import HeraldPostgres

extension Store {
    /// Removes, as at logout, every device of every tenant its app has not registered again
    /// within `deviceFreshness.removeAfter` (DESIGN §19); a later registration brings it back.
    /// Runs as `herald_dispatcher` (the workers' hourly upkeep).
    /// - Returns: how many devices were removed.
    @discardableResult
    public func removeExpiredDevices() async throws -> Int {
        let rows = try await pool.query(
            """
            UPDATE devices SET removed_at = now(), updated_at = now()
            WHERE removed_at IS NULL AND deactivated_at IS NULL
              AND last_seen_at <= now() - make_interval(secs => \(deviceFreshness.removeAfter.timeInterval))
            RETURNING id
            """)
        return rows.count
    }
}
