import HeraldCore

/// What a tenant's backend can be told of (docs/webhooks.md): every activity event, the chat's
/// messages, reads and changes, what became of each notification, and dead tokens.
public enum WebhookEventType: String, Sendable, CaseIterable, Codable {
    case activityAssigned = "activity.assigned"
    case activityStarted = "activity.started"
    case activityCompletionRequested = "activity.completion_requested"
    case activityApproved = "activity.approved"
    case activityRejected = "activity.rejected"
    case activityApprovalReminder = "activity.approval_reminder"
    case activityEscalated = "activity.escalated"
    case activityDeadlineSoon = "activity.deadline_soon"
    case activityOverdue = "activity.overdue"
    case messageCreated = "message.created"
    case messageRead = "message.read"
    case conversationUpdated = "conversation.updated"
    case notificationSent = "notification.sent"
    case notificationFailed = "notification.failed"
    case notificationDeferred = "notification.deferred"
    case notificationSuperseded = "notification.superseded"
    case notificationSuppressed = "notification.suppressed"
    case deviceDeactivated = "device.deactivated"

    /// The webhook event of an activity event (a chat message is `message.created`).
    public init(_ event: EventKind) {
        switch event {
        case .activityAssigned: self = .activityAssigned
        case .activityStarted: self = .activityStarted
        case .activityCompletionRequested: self = .activityCompletionRequested
        case .activityApproved: self = .activityApproved
        case .activityRejected: self = .activityRejected
        case .activityApprovalReminder: self = .activityApprovalReminder
        case .activityEscalated: self = .activityEscalated
        case .activityDeadlineSoon: self = .activityDeadlineSoon
        case .activityOverdue: self = .activityOverdue
        case .chatMessage: self = .messageCreated
        }
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
