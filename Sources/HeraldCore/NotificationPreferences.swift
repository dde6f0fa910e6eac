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
    /// Gathered into the person's digest (`digest_id`), pushed with it when its window ends.
    case digest
}

/// Which pushes a person wants (docs/notifications.md): per event kind and app, `immediate`,
/// `digest` or `off`; a person's own setting wins over the tenant's default, and with neither
/// it is immediate. P0 activity events are pushed at once whatever anyone set, and a tenant's
/// `digest` does not gather the events that ask the person to act (`asksToAct`): only their own
/// choice does. Pure.
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
    public var own: [Key: PushMode]
    /// The tenant's defaults, for everyone who set nothing.
    public var tenant: [Key: PushMode]

    public init(own: [Key: PushMode] = [:], tenant: [Key: PushMode] = [:]) {
        self.own = own
        self.tenant = tenant
    }

    /// Where a setting in effect comes from.
    public enum Origin: String, Sendable, Codable {
        case own, tenant
        case builtIn = "default"
    }

    /// How pushes of `event` on `app` go out, and why.
    public func setting(_ event: EventKind, app: AppKind) -> (mode: PushMode, origin: Origin) {
        let key = Key(event: event, app: app)
        if let value = own[key] { return (value, .own) }
        if let value = tenant[key] {
            // The tenant may not gather what asks this person to act.
            return value == .digest && Self.asksToAct(event, app: app) ? (.immediate, .builtIn) : (value, .tenant)
        }
        return (.immediate, .builtIn)
    }

    /// How an event of this priority (nil: chat) goes out on this app.
    public func mode(_ event: EventKind, app: AppKind, priority: Priority?) -> PushMode {
        if Self.breaksThrough(event, priority: priority) { return .immediate }
        return setting(event, app: app).mode
    }

    /// P0 activity events break through: no preference turns them off or gathers them, and
    /// quiet hours do not defer them (docs/notifications.md). Chat messages never do. The rule,
    /// written once.
    public static func breaksThrough(_ event: EventKind, priority: Priority?) -> Bool {
        priority == .p0 && event != .chatMessage
    }

    /// The events that ask the one who gets them to act: an assignment to its assignee (the
    /// member app), a request for approval to the manager. Immediate unless the person chose
    /// otherwise themselves.
    public static func asksToAct(_ event: EventKind, app: AppKind) -> Bool {
        (event == .activityAssigned && app == .member) || (event == .activityCompletionRequested && app == .manager)
    }

    /// `activity.started=manager=digest` entries as a query returns them (`own:` or `tenant:`
    /// first).
    public init(entries: [String]) {
        var own: [Key: PushMode] = [:]
        var tenant: [Key: PushMode] = [:]
        for entry in entries {
            let scope = entry.prefix { $0 != ":" }
            let rest = entry.dropFirst(scope.count + 1)
            let parts = rest.split(separator: "=")
            guard parts.count == 3, let event = EventKind(rawValue: String(parts[0])), let app = AppKind(rawValue: String(parts[1])),
                let mode = PushMode(rawValue: String(parts[2]))
            else { continue }
            let key = Key(event: event, app: app)
            if scope == "own" { own[key] = mode } else { tenant[key] = mode }
        }
        self.init(own: own, tenant: tenant)
    }
}
