import Foundation
import HeraldCore
import HeraldPostgres

extension Store {
    /// Removes, as at logout, every device of every tenant its app has not registered again
    /// within `deviceFreshness.removeAfter` (docs/apps.md); a later registration brings it back.
    /// And the update tokens of Live Activities that ended a day ago or more (`endedLiveActivity`):
    /// their activity is approved, nothing is sent to them again.
    /// Runs as `herald_dispatcher` (the workers' hourly upkeep).
    /// - Returns: how many devices were removed.
    @discardableResult
    public func removeExpiredDevices() async throws -> Int {
        let expired = try await pool.query(
            """
            UPDATE devices SET removed_at = now(), updated_at = now()
            WHERE removed_at IS NULL AND deactivated_at IS NULL AND kind <> 'email'
              AND last_seen_at <= now() - make_interval(secs => \(deviceFreshness.removeAfter.timeInterval))
            RETURNING id
            """)
        // The few update tokens still kept, each against its activity's notifications (on their
        // index): the end was written (and sent, or given up on) more than a day ago.
        let ended = try await pool.query(
            """
            UPDATE devices d SET removed_at = now(), updated_at = now()
            WHERE d.kind = 'liveactivity_update' AND d.removed_at IS NULL
              AND EXISTS (
                  SELECT FROM notifications n
                  WHERE n.tenant_id = d.tenant_id AND n.activity_id = d.activity_id
                    AND n.kind = \(LiveActivityContent.Event.end.notificationKind)
                    AND n.created_at <= now() - make_interval(secs => \(Self.endedLiveActivity.timeInterval)))
            RETURNING id
            """)
        return expired.count + ended.count
    }

    /// How long after its end a Live Activity's update tokens are kept (its dismissal date is
    /// four hours after the end; a day leaves the end push its retries).
    static let endedLiveActivity: Duration = .seconds(86_400)
}
