import Foundation

/// A change of a person's inbox items (docs/inbox.md), as the live channel's `inbox.status`
/// frame and the webhooks' `notification.seen`, … tell of it: which items changed, what they
/// became, when and from which device, what happened to each (for history's engagement,
/// webhooks and metrics), and the person's badge after it.
public struct InboxStatusChange: Sendable, Codable, Equatable {
    /// What happened to one notification (an opening may happen to a chat notification too,
    /// which is no inbox item).
    public struct Happened: Sendable, Codable, Equatable {
        public let notificationID: UUID
        public let event: String
        public let app: AppKind
        public let activityID: UUID?
        public let conversationID: UUID?
        public let events: [InboxEngagement.Event]

        public init(
            notificationID: UUID, event: String, app: AppKind, activityID: UUID?, conversationID: UUID?, events: [InboxEngagement.Event]
        ) {
            self.notificationID = notificationID
            self.event = event
            self.app = app
            self.activityID = activityID
            self.conversationID = conversationID
            self.events = events
        }

        enum CodingKeys: String, CodingKey {
            case event, app, events
            case notificationID = "notificationId"
            case activityID = "activityId"
            case conversationID = "conversationId"
        }
    }

    public let recipientID: UUID
    /// The inbox items whose status changed.
    public let ids: [UUID]
    public let status: InboxEngagement.Status
    public let at: Date
    public let device: UUID?
    /// The action an opening came with (`approve`, …), if any.
    public let action: String?
    public let happened: [Happened]
    /// The person's badge after the change (`InboxCounts.badge`).
    public let badge: Int

    public init(
        recipientID: UUID, ids: [UUID], status: InboxEngagement.Status, at: Date, device: UUID?, action: String?, happened: [Happened],
        badge: Int
    ) {
        self.recipientID = recipientID
        self.ids = ids
        self.status = status
        self.at = at
        self.device = device
        self.action = action
        self.happened = happened
        self.badge = badge
    }

    /// Whether there is anything to tell: items changed, or something happened.
    public var isEmpty: Bool { ids.isEmpty && happened.isEmpty }

    enum CodingKeys: String, CodingKey {
        case ids, status, at, action, happened, badge
        case recipientID = "recipientId"
        case device = "deviceId"
    }
}
