import Foundation

// What happened to notifications, as history, `why` and statistics show them (docs/history.md
// in the Herald repository). Who may see what is the server's to decide: a notification the
// caller may know of but not read comes with `wordsWithheld`.

/// What became of a notification.
public enum NotificationStatus: OpenEnum {
    case sent, pending, noDevice, suppressed, digested, deadToken, failed, expired, cancelled, unanswered
    case unknown(String)
    public static let known: [NotificationStatus] = [
        .sent, .pending, .noDevice, .suppressed, .digested, .deadToken, .failed, .expired, .cancelled, .unanswered
    ]
    public var rawValue: String {
        switch self {
        case .sent: "sent"
        case .pending: "pending"
        case .noDevice: "no_device"
        case .suppressed: "suppressed"
        case .digested: "digested"
        case .deadToken: "dead_token"
        case .failed: "failed"
        case .expired: "expired"
        case .cancelled: "cancelled"
        case .unanswered: "unanswered"
        case .unknown(let value): value
        }
    }
}

/// One notification in history: who was told what, and what became of it.
public struct HistoryEntry: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    /// `activity.assigned`, `chat.message`, … and `digest`, `badge` for Herald's own.
    public var event: EventKind
    public var eventId: UUID
    public var recipient: PersonReference
    public var app: AppKind
    public var title: String
    public var body: String
    public var status: NotificationStatus
    /// Why, when it was not sent (`preference_off`, `quiet_hours: …`).
    public var reason: String?
    public var devices: Int
    public var devicesSent: Int
    public var activityId: UUID?
    public var conversationId: UUID?
    public var eventAt: Date
    public var createdAt: Date
    public var sentAt: Date?
    /// What fan-out decided for this recipient: `send`, `muted`, `preference_off`, `viewing`,
    /// `quiet_hours`, `no_device`, `superseded` or `digest`.
    public var decision: String?
    /// Quiet hours: when its pushes are due.
    public var deferredUntil: Date?
    public var digestId: UUID?
    /// The caller may know it was sent but not read what it said: title and body only say so.
    public var wordsWithheld: Bool
    public var engagement: Engagement
}

/// One push of a notification to one device, and each attempt at it.
public struct DeliveryRecord: Codable, Sendable, Hashable, Identifiable {
    public struct Attempt: Codable, Sendable, Hashable {
        public var attempt: Int
        public var worker: String
        public var startedAt: Date
        public var finishedAt: Date
        public var durationMilliseconds: Int
        /// `sent`, `retry`, `dead_token`, `failed`, …
        public var outcome: String
        public var httpStatus: Int?
        public var providerError: String?
        public var messageId: String?
        public var nextAttemptAt: Date?
        /// Whether it counted against the delivery's attempts (a provider's outage does not).
        public var counted: Bool
    }
    public var id: UUID
    public var deviceId: UUID
    public var tokenPreview: String
    /// `token` or `fid`.
    public var address: String
    public var platform: Platform
    public var provider: PushProvider
    public var deviceState: DeviceState
    public var status: String
    public var attemptCount: Int
    public var dueAt: Date
    public var deadlineAt: Date
    public var sentAt: Date?
    public var messageId: String?
    public var httpStatus: Int?
    public var lastError: String?
    public var attempts: [Attempt]
}

/// One notification whole: its words, what its push carried, every delivery and attempt.
public struct HistoryDetail: Codable, Sendable, Hashable {
    public var notification: HistoryEntry
    /// The push's data (`activityId`, `version`, `actions`, …).
    public var data: [String: String]
    public var badge: Int
    public var sound: Bool
    public var threadId: String
    public var imageUrl: String?
    public var deliveries: [DeliveryRecord]
}

/// Why people were or were not told of an activity: each of its events, and for each the
/// notifications it made (`GET /v1/activities/{id}/notifications`, the CLI's `herald why`).
public struct WhyEvent: Codable, Sendable, Hashable {
    /// Present while the event waits to be fanned out: since when, and whom it will consider.
    public struct Queued: Codable, Sendable, Hashable {
        public var since: Date
        public var candidates: Int
        public var people: [PersonReference]
    }
    /// Present, for admins, when writing the event's notifications failed.
    public struct FanOutFailure: Codable, Sendable, Hashable {
        public var failures: Int
        public var error: String
        public var passedOverAt: Date?
        public var pending: Bool
    }
    public var eventId: UUID
    public var event: EventKind
    public var at: Date
    public var actor: PersonReference?
    public var recipients: [HistoryDetail]
    public var fanOut: FanOutFailure?
    public var queued: Queued?
}

/// Filters of `GET /v1/history`.
public struct HistoryFilter: Sendable, Hashable {
    /// How far back: `90m`, `24h`, `7d` (nil: the server's default).
    public var since: String?
    public var status: NotificationStatus?
    /// A recipient's email.
    public var user: String?
    public var activity: UUID?
    public var conversation: UUID?
    public var event: EventKind?
    /// What a digest gathered, and its own push.
    public var digest: UUID?
    public init(
        since: String? = nil, status: NotificationStatus? = nil, user: String? = nil, activity: UUID? = nil, conversation: UUID? = nil,
        event: EventKind? = nil, digest: UUID? = nil
    ) {
        self.since = since
        self.status = status
        self.user = user
        self.activity = activity
        self.conversation = conversation
        self.event = event
        self.digest = digest
    }
}

/// The tenant's delivery statistics (`GET /v1/stats`, admins and keys).
public struct DeliveryStats: Codable, Sendable, Hashable {
    public struct Tenant: Codable, Sendable, Hashable {
        public struct Latency: Codable, Sendable, Hashable {
            public var p50Milliseconds: Double
            public var p95Milliseconds: Double
            public var p99Milliseconds: Double
            public var maxMilliseconds: Double
        }
        public var tenant: String
        /// Event → status → count.
        public var notifications: [String: [String: Int]]
        /// A delivery's status → count.
        public var deliveries: [String: Int]
        public var successRate: Double?
        public var latency: Latency?
        public var deadTokens: Int
    }
    /// A provider a worker stopped sending to for a while (its outage, or its refusal of the
    /// tenant's credentials).
    public struct PausedProvider: Codable, Sendable, Hashable {
        public var provider: String
        public var worker: String
        public var reason: String
        public var since: Date
        public var until: Date
    }
    public var since: Date?
    public var tenants: [Tenant]
    public var pausedProviders: [PausedProvider]
    /// What waits in the queue, by kind.
    public var queue: [String: Int]
}
