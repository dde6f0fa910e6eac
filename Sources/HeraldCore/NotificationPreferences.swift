import Foundation

/// What fan-out decided for one recipient of one event (docs/notifications.md): the answer to "why
/// (not)". The provider's answer (sent, dead token, expired) comes later, per device.
public enum NotificationDecision: String, Sendable, CaseIterable, Codable {
    /// Pushed to every active device of the app.
    case send
    /// Pushed without sound: the conversation is muted.
    case muted
    /// Not pushed: they switched this event off on this app (or the tenant did for everyone).
    case preferenceOff = "preference_off"
    /// Not pushed: they had the conversation open.
    case viewing
    /// Pushed when their quiet hours end (`deferred_until`).
    case quietHours = "quiet_hours"
    /// Not pushed: no active device on that app.
    case noDevice = "no_device"
    /// Not pushed: the activity had moved on before it went out.
    case superseded
}

/// Which pushes a person wants (docs/notifications.md): per event kind and app, on or off; a
/// person's own setting wins over the tenant's default, and with neither it is on. P0
/// activity events are pushed whatever anyone set. Pure.
public struct NotificationPreferences: Sendable, Equatable {
    public struct Key: Sendable, Hashable {
        public let event: EventKind
        public let app: AppKind

        public init(event: EventKind, app: AppKind) {
            self.event = event
            self.app = app
        }
    }

    /// The person's own settings.
    public var own: [Key: Bool]
    /// The tenant's defaults, for everyone who set nothing.
    public var tenant: [Key: Bool]

    public init(own: [Key: Bool] = [:], tenant: [Key: Bool] = [:]) {
        self.own = own
        self.tenant = tenant
    }

    /// Where a setting in effect comes from.
    public enum Origin: String, Sendable, Codable {
        case own, tenant
        case builtIn = "default"
    }

    /// Whether pushes of `event` on `app` are on, and why.
    public func setting(_ event: EventKind, app: AppKind) -> (enabled: Bool, origin: Origin) {
        let key = Key(event: event, app: app)
        if let value = own[key] { return (value, .own) }
        if let value = tenant[key] { return (value, .tenant) }
        return (true, .builtIn)
    }

    /// Whether an event of this priority (nil: chat) is pushed to this app.
    public func allows(_ event: EventKind, app: AppKind, priority: Priority?) -> Bool {
        if Self.breaksThrough(event, priority: priority) { return true }
        return setting(event, app: app).enabled
    }

    /// P0 activity events break through: no preference turns them off and quiet hours do not
    /// defer them (docs/notifications.md). Chat messages never do. The rule, written once.
    public static func breaksThrough(_ event: EventKind, priority: Priority?) -> Bool {
        priority == .p0 && event != .chatMessage
    }

    /// `activity.started=off` entries as a query returns them (`own:` or `tenant:` first).
    public init(entries: [String]) {
        var own: [Key: Bool] = [:]
        var tenant: [Key: Bool] = [:]
        for entry in entries {
            let scope = entry.prefix { $0 != ":" }
            let rest = entry.dropFirst(scope.count + 1)
            let parts = rest.split(separator: "=")
            guard parts.count == 3, let event = EventKind(rawValue: String(parts[0])), let app = AppKind(rawValue: String(parts[1]))
            else { continue }
            let key = Key(event: event, app: app)
            if scope == "own" { own[key] = parts[2] == "true" } else { tenant[key] = parts[2] == "true" }
        }
        self.init(own: own, tenant: tenant)
    }
}
