import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// Keeps the update token of an activity's Live Activity on `viewer`'s phone (docs/apps.md):
    /// the app uploads it once the Live Activity runs, and every later change of the activity
    /// is pushed to it. The same token again only refreshes it.
    /// - Parameter app: the app the Live Activity runs in; by default the assignee's (member)
    ///   or the manager's (manager), whichever the viewer is.
    /// - Returns: the token's device, and whether it is new.
    /// - Throws: `InputError` for a malformed token; `StoreError.notFound` for an activity the
    ///   viewer may not see; `.forbidden` for someone it does not start for; `.invalid` for an
    ///   activity that has no Live Activity (not P0, or approved) or a retired token;
    ///   `.conflict` for a token registered for something else.
    public func keepLiveActivityToken(activity id: UUID, viewer: Person, token: String, app: AppKind?) async throws -> (Device, created: Bool) {
        let token = try Input.token(token, provider: .apns)
        let activity = try await self.activity(id: id, viewer: viewer)
        let apps = AccessPolicy(viewer).liveActivityApps(assignee: activity.assignee.id, manager: activity.manager.id)
        guard let first = apps.first else {
            throw StoreError(.forbidden, "only the assignee and the manager of an activity have its Live Activity")
        }
        let app = app ?? first
        guard apps.contains(app) else {
            throw StoreError(
                .forbidden, "the Live Activity on the \(app.rawValue) app is for the activity's \(app == .member ? "assignee" : "manager")")
        }
        guard activity.priority == .p0 else {
            throw StoreError(.invalid, "only P0 activities have a Live Activity; this one is \(activity.priority.rawValue.uppercased())")
        }
        guard activity.status != .approved else { throw StoreError(.invalid, "the activity is approved: its Live Activity has ended") }
        for _ in 0..<2 {
            if let existing = try await device(token: token, address: .token, provider: .apns, locking: true) {
                guard existing.kind == .liveActivityUpdate, existing.activityID == id, existing.owner.id == viewer.id else {
                    throw StoreError(
                        .conflict, "token \(existing.tokenPreview) is registered for something else; the app must send this activity's update token")
                }
                if let retired = existing.deactivatedAt {
                    throw StoreError(
                        .invalid,
                        "token \(existing.tokenPreview) was retired by apns on \(retired.formatted(.iso8601)) "
                            + "(\(existing.deactivationReason ?? "no reason")); the app must send its new update token")
                }
                try await connection.query(
                    """
                    UPDATE devices SET app = \(app.rawValue), updated_at = now(), last_seen_at = now(), removed_at = NULL
                    WHERE tenant_id = \(tenantID) AND id = \(existing.id)
                    """)
                return (try await device(id: existing.id), false)
            }
            let inserted = try await connection.query(
                """
                INSERT INTO devices (tenant_id, id, person_id, token, address, app, platform, provider, kind, activity_id)
                VALUES (\(tenantID), \(UUID.v7()), \(viewer.id), \(token), 'token', \(app.rawValue), 'ios', 'apns',
                        \(DeviceKind.liveActivityUpdate.rawValue), \(id))
                ON CONFLICT (tenant_id, provider, address, token) DO NOTHING
                RETURNING id
                """)
            if let row = inserted.first { return (try await device(id: try row.decode(UUID.self, at: 0)), true) }
        }
        throw StoreError(.conflict, "the token was registered concurrently; try again")
    }
}
