import Foundation

/// The snapshot an activity event carries: everything needed to render its notification
/// later, as it was when the event happened.
public struct ActivityEventPayload: Sendable, Codable, Equatable {
    public struct Recipient: Sendable, Codable, Equatable {
        public let id: UUID
        public let app: AppKind

        public init(id: UUID, app: AppKind) {
            self.id = id
            self.app = app
        }
    }

    public let event: EventKind
    public let activityID: UUID
    public let teamID: UUID
    public let teamName: String
    public let activityName: String
    public let priority: Priority
    public let deadline: LocalDate
    public let status: ActivityStatus
    public let actor: PersonReference
    public let manager: PersonReference
    public let assignee: PersonReference
    public let recipients: [Recipient]
    public let reason: String?
    /// Milliseconds since the Unix epoch: JSON keeps it exact.
    public let occurredAtMilliseconds: Int64
    /// For a reminder: when the wait it chases began (the completion request, or the
    /// assignment for the deadline reminders), in milliseconds since the Unix epoch.
    public let waitingSinceMilliseconds: Int64?
    /// The activity's version after the event (HTTP `ETag`): a push carries it, so that a
    /// button on the notification acts only on the version its recipient saw (`If-Match`).
    /// Nil in events written before pushes carried it.
    public let version: Int?

    public init(
        event: EventKind, activityID: UUID, teamID: UUID, teamName: String, activityName: String, priority: Priority,
        deadline: LocalDate, status: ActivityStatus, actor: PersonReference, manager: PersonReference,
        assignee: PersonReference, recipients: [Recipient], reason: String?, occurredAt: Date, waitingSince: Date? = nil,
        version: Int? = nil
    ) {
        self.event = event
        self.activityID = activityID
        self.teamID = teamID
        self.teamName = teamName
        self.activityName = activityName
        self.priority = priority
        self.deadline = deadline
        self.status = status
        self.actor = actor
        self.manager = manager
        self.assignee = assignee
        self.recipients = recipients
        self.reason = reason
        self.occurredAtMilliseconds = Self.milliseconds(occurredAt)
        self.waitingSinceMilliseconds = waitingSince.map(Self.milliseconds)
        self.version = version
    }

    public var occurredAt: Date { Date(timeIntervalSince1970: Double(occurredAtMilliseconds) / 1000) }
    public var waitingSince: Date? { waitingSinceMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) } }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}

/// An event as the outbox holds it.
public struct OutboxEvent: Sendable, Codable, Equatable {
    public let id: UUID
    public let sequence: Int64
    public let kind: EventKind
    public let activityID: UUID?
    public let actorID: UUID
    public let recipientIDs: [UUID]
    public let occurredAt: Date

    public init(id: UUID, sequence: Int64, kind: EventKind, activityID: UUID?, actorID: UUID, recipientIDs: [UUID], occurredAt: Date) {
        self.id = id
        self.sequence = sequence
        self.kind = kind
        self.activityID = activityID
        self.actorID = actorID
        self.recipientIDs = recipientIDs
        self.occurredAt = occurredAt
    }
}
