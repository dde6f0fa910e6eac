import Foundation

// What an admin's app manages (docs/webhooks.md and docs/notifications.md in the Herald
// repository): the tenant's webhook endpoints and its reminder policy.

/// A webhook endpoint: where the tenant's events are posted, signed (Standard Webhooks).
public struct WebhookEndpoint: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var url: String
    /// Subscription patterns: a type (`message.created`), a family (`activity.*`) or `*`.
    public var events: [String]
    public var description: String?
    /// `active` or `disabled` (after failing for days, or by hand).
    public var state: String
    public var disabledReason: String?
    public var disabledAt: Date?
    /// Until when requests carry the previous secret's signature too (a day after a rotation).
    public var previousSecretUntil: Date?
    public var createdAt: Date
    public var updatedAt: Date
}

/// An endpoint and its signing secret (`whsec_…`), shown by create and rotate only.
public struct WebhookSecret: Codable, Sendable, Hashable {
    public var endpoint: WebhookEndpoint
    public var secret: String

    enum Keys: String, CodingKey { case secret }
    public init(from decoder: any Decoder) throws {
        endpoint = try WebhookEndpoint(from: decoder)
        secret = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .secret)
    }
    public func encode(to encoder: any Encoder) throws {
        try endpoint.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(secret, forKey: .secret)
    }
}

/// One attempt at posting an event to an endpoint.
public struct WebhookAttempt: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    public var webhookId: UUID
    /// The event's message (`webhook-id` is `msg_` and its hexadecimal).
    public var messageId: UUID
    public var eventType: String
    public var attempt: Int
    /// The status the endpoint answered (nil: it did not answer).
    public var status: Int?
    public var error: String?
    /// The answer's first KiB.
    public var response: String?
    public var durationMs: Int
    public var at: Date
}

/// How activities are chased (`GET|PUT /v1/policy`): durations per priority (`30m`, `4h`,
/// `1d`, or `off`).
public struct ReminderPolicy: Codable, Sendable, Hashable {
    /// A duration or `off` for each priority.
    public struct PerPriority: Codable, Sendable, Hashable {
        public var p0, p1, p2, p3: String?
        public init(p0: String? = nil, p1: String? = nil, p2: String? = nil, p3: String? = nil) {
            self.p0 = p0
            self.p1 = p1
            self.p2 = p2
            self.p3 = p3
        }
        public subscript(priority: Priority) -> String? {
            switch priority {
            case .p0: p0
            case .p1: p1
            case .p2: p2
            case .p3: p3
            case .unknown: nil
            }
        }
    }
    /// The manager is reminded while an activity waits for approval this long.
    public var approvalReminder: PerPriority
    /// The admins are told once it waited this long.
    public var escalateAfter: PerPriority
    /// `HH:MM` on the assignee's clock the day before the deadline, or `off`.
    public var deadlineReminderAt: String
    public var overdue: Bool
    /// How long an assignment or a request may stay unopened before it is pushed again and
    /// told to those above (a priority not named: never).
    public var unopened: PerPriority?
    public init(
        approvalReminder: PerPriority, escalateAfter: PerPriority, deadlineReminderAt: String, overdue: Bool, unopened: PerPriority? = nil
    ) {
        self.approvalReminder = approvalReminder
        self.escalateAfter = escalateAfter
        self.deadlineReminderAt = deadlineReminderAt
        self.overdue = overdue
        self.unopened = unopened
    }
}
