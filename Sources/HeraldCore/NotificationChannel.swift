/// Which channel a person wants an event on, per app (docs/notifications.md#email).
public enum NotificationChannel: String, Sendable, Codable, CaseIterable {
    /// The default: pushed, and emailed when no device can be pushed.
    case push
    /// Pushed, never emailed (what the one-click unsubscribe sets).
    case pushOnly = "push_only"
    /// Pushed and emailed.
    case both
    /// Emailed instead of pushed (pushed when there is no address to email).
    case email
}
