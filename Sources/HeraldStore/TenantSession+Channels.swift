import Foundation
import HeraldCore
import HeraldPostgres

/// The channel a person wants each event on (docs/notifications.md#email).
extension TenantSession {
    /// Their chosen channels, by `event=app` (none chosen: `push`).
    func channels(of person: UUID) async throws -> [String: NotificationChannel] {
        let rows = try await connection.query(
            "SELECT event || '=' || app, channel FROM notification_channels WHERE tenant_id = \(tenantID) AND person_id = \(person)")
        var channels: [String: NotificationChannel] = [:]
        for row in rows {
            let (key, channel) = try row.decode((String, String).self)
            channels[key] = NotificationChannel(rawValue: channel)
        }
        return channels
    }

    /// Sets the channel of `event` on `app` (every app it reaches, for nil) for `person`;
    /// `push`, the default, removes the setting.
    /// - Throws: `InputError` when the event never reaches that app.
    public func setChannel(_ channel: NotificationChannel, for event: EventKind, app: AppKind?, of person: Person) async throws {
        let apps =
            try app.map { app in
                guard event.apps.contains(app) else { throw InputError("\(event.rawValue) never reaches the \(app.rawValue) app", field: "app") }
                return [app]
            } ?? event.apps
        for app in apps {
            if channel == .push {
                try await connection.query(
                    """
                    DELETE FROM notification_channels
                    WHERE tenant_id = \(tenantID) AND person_id = \(person.id) AND event = \(event.rawValue) AND app = \(app.rawValue)
                    """)
            } else {
                try await connection.query(
                    """
                    INSERT INTO notification_channels (tenant_id, person_id, event, app, channel)
                    VALUES (\(tenantID), \(person.id), \(event.rawValue), \(app.rawValue), \(channel.rawValue))
                    ON CONFLICT (tenant_id, person_id, event, app) DO UPDATE SET channel = EXCLUDED.channel, updated_at = now()
                    """)
            }
        }
    }
}
