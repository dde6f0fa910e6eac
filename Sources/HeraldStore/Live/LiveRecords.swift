import Foundation
import HeraldCore

/// What a durable frame reports.
public enum LiveKind: String, Sendable, Codable, CaseIterable {
    case message, receipt, conversation, activity, notification
    /// A person's inbox items changed (docs/inbox.md).
    case inboxStatus = "inbox_status"
}

/// Who a feed row is for; the access rules decide who of them may see it when it is read.
public enum LiveAudience: Sendable, Equatable {
    /// One person (their notifications).
    case person(UUID)
    /// The conversation's participants (from joining until leaving), except `excluding`.
    case conversation(UUID, excluding: UUID? = nil)
    /// Those who may see the activity: its assignee, its team's managers, admins.
    case activity(UUID)
    /// No socket: an event only the tenant's webhooks are told of (a timer's activity event).
    case webhooksOnly
}

/// A receipt as its frame reports it: the highest sequence a participant's apps received and read.
public struct LiveReceipt: Sendable, Codable, Equatable {
    public let person: String
    public let received: Int64?
    public let read: Int64?

    public init(person: String, received: Int64?, read: Int64?) {
        self.person = person
        self.received = received
        self.read = read
    }
}

/// The payload of a feed row of receipts a round wrote for one sender: `{"receipts": [...]}`.
struct LiveReceiptBatch: Sendable, Codable {
    let receipts: [LiveReceipt]
}

/// An activity's transition as its frame reports it.
public struct LiveActivityChange: Sendable, Codable, Equatable {
    public let event: EventKind
    public let activity: ActivityRecord

    public init(event: EventKind, activity: ActivityRecord) {
        self.event = event
        self.activity = activity
    }
}

/// What a feed row carries, decoded.
public enum LivePayload: Sendable, Equatable {
    case message(conversation: UUID, MessageRecord)
    /// A participant's own receipt (what their apps said they received or read).
    case receipt(conversation: UUID, LiveReceipt)
    /// The receipts one round of the live channel wrote for one sender, as its messages were
    /// written to others' sockets: a row of `k` holds the `k` feed positions up to its own,
    /// one a frame (`positions`).
    case deliveryReceipts(conversation: UUID, [LiveReceipt])
    /// The conversation changed; its object is read for each reader (it is theirs: unread counts).
    case conversation(UUID)
    case activity(LiveActivityChange)
    case notification(LiveNotification)
    case inboxStatus(InboxStatusChange)

    /// How many feed positions the row holds, its own the last: one a frame.
    public var positions: Int {
        if case .deliveryReceipts(_, let receipts) = self { return max(1, receipts.count) }
        return 1
    }
}

/// One feed row for one reader.
public struct LiveRow: Sendable, Equatable {
    public let position: Int64
    public let reader: UUID
    public let payload: LivePayload
}

/// The in-app banner: what a push to this person carries, whether or not one was sent.
public struct LiveNotification: Sendable, Codable, Equatable {
    public let id: UUID
    public let event: EventKind
    public let title: String
    public let body: String
    public let priority: Priority?
    public let activityID: UUID?
    public let conversationID: UUID?
    public let messageID: UUID?
    /// The person's badge with it counted.
    public let badge: Int?

    public init(
        id: UUID, event: EventKind, title: String, body: String, priority: Priority?, activityID: UUID?, conversationID: UUID?, messageID: UUID?,
        badge: Int?
    ) {
        self.id = id
        self.event = event
        self.title = title
        self.body = body
        self.priority = priority
        self.activityID = activityID
        self.conversationID = conversationID
        self.messageID = messageID
        self.badge = badge
    }

    /// JSON names: identifiers end in `Id`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id, event, title, body, priority, badge
        case activityID = "activityId"
        case conversationID = "conversationId"
        case messageID = "messageId"
    }
}
