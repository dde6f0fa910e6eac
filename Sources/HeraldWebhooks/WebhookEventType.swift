import HeraldCore

/// What a tenant's backend can be told of (docs/webhooks.md): every activity event (`EventKind`,
/// under its own name), the chat's messages, reads and changes, what became of each
/// notification, and dead tokens.
public enum WebhookEventType: Hashable, Sendable, CaseIterable, Codable, RawRepresentable {
    /// An activity event, under the event's own name (`activity.approved`).
    case activity(EventKind)
    case messageCreated
    case messageRead
    case conversationUpdated
    case notificationSent
    case notificationFailed
    case notificationDeferred
    case notificationSuperseded
    case notificationSuppressed
    /// Gathered into the person's digest (docs/notifications.md), which is reported as a
    /// notification of its own when it is sent.
    case notificationDigested
    /// What its person did with it (docs/inbox.md): seen in a list, read, its push opened, an
    /// action taken from it, archived.
    case notificationEngaged(InboxEngagement.Event)
    case deviceDeactivated

    public static let allCases: [WebhookEventType] =
        EventKind.activityEvents.map(Self.activity) + [
            .messageCreated, .messageRead, .conversationUpdated, .notificationSent, .notificationFailed, .notificationDeferred,
            .notificationSuperseded, .notificationSuppressed, .notificationDigested
        ] + InboxEngagement.Event.told.map(Self.notificationEngaged) + [.deviceDeactivated]

    public var rawValue: String {
        switch self {
        case .activity(let event): event.rawValue
        case .messageCreated: "message.created"
        case .messageRead: "message.read"
        case .conversationUpdated: "conversation.updated"
        case .notificationSent: "notification.sent"
        case .notificationFailed: "notification.failed"
        case .notificationDeferred: "notification.deferred"
        case .notificationSuperseded: "notification.superseded"
        case .notificationSuppressed: "notification.suppressed"
        case .notificationDigested: "notification.digested"
        case .notificationEngaged(let event): "notification.\(event.rawValue)"
        case .deviceDeactivated: "device.deactivated"
        }
    }

    public init?(rawValue: String) {
        guard let found = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = found
    }

    /// The webhook event of an event (a chat message is `message.created`).
    public init(_ event: EventKind) {
        self = event == .chatMessage ? .messageCreated : .activity(event)
    }
}

/// The events an endpoint subscribes to, as patterns: a type (`message.created`), a family
/// (`activity.*`, `notification.*`), or everything (`*`).
public struct WebhookEventFilter: Sendable, Equatable, Codable {
    /// The patterns as given, each checked, without repeats, in their order.
    public let patterns: [String]

    public static let maxPatterns = 50

    /// - Throws: `InputError` for no pattern, too many, or one that matches no event.
    public init(_ patterns: [String]) throws {
        var kept: [String] = []
        for pattern in patterns.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !kept.contains(pattern) {
            guard WebhookEventType.allCases.contains(where: { Self.matches(pattern, $0) }) else {
                let families = Set(WebhookEventType.allCases.map { $0.rawValue.prefix { $0 != "." } + ".*" }).sorted()
                throw InputError(
                    "event pattern \"\(Input.printable(pattern))\" matches no event: give a type such as message.created, "
                        + "a family (\(families.joined(separator: ", "))) or *")
            }
            kept.append(pattern)
        }
        guard !kept.isEmpty else { throw InputError("give at least one event pattern, such as activity.* or *") }
        guard kept.count <= Self.maxPatterns else { throw InputError("at most \(Self.maxPatterns) event patterns") }
        self.patterns = kept
    }

    /// `"activity.*,message.created"`, as the CLI takes them.
    public init(commaSeparated text: String) throws {
        try self.init(text.split(separator: ",").map(String.init))
    }

    public func matches(_ type: WebhookEventType) -> Bool {
        patterns.contains { Self.matches($0, type) }
    }

    static func matches(_ pattern: String, _ type: WebhookEventType) -> Bool {
        if pattern == "*" { return true }
        if pattern.hasSuffix(".*") { return type.rawValue.hasPrefix(pattern.dropLast()) }
        return pattern == type.rawValue
    }
}
