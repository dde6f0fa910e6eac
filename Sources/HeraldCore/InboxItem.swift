import Foundation

/// One item of a person's inbox (docs/inbox.md): a notification about an activity, with its
/// words as the person was told them, and the activity as it stands now — its status, and the
/// actions the person may take on it now (`ActivityStateMachine.actions`). An item asking Alice
/// to approve that Dave already approved shows `approved`, and no action.
public struct InboxItem: Sendable, Codable, Equatable {
    /// The activity as it stands now, for the person (nil when they may no longer see it:
    /// the item keeps its words, and offers nothing).
    public struct ActivityNow: Sendable, Codable, Equatable {
        public let id: UUID
        public let name: String
        public let status: ActivityStatus
        public let priority: Priority
        /// Its `ETag`: an action taken from the item sends it in `If-Match`.
        public let version: Int

        public init(id: UUID, name: String, status: ActivityStatus, priority: Priority, version: Int) {
            self.id = id
            self.name = name
            self.status = status
            self.priority = priority
            self.version = version
        }
    }

    /// The notification's id (also `notificationId` in its push, and its id in history).
    public let id: UUID
    /// The event it told of (`activity.assigned`, …, `activity.reminder`, `activity.escalated`).
    public let event: String
    public let app: AppKind
    public let title: String
    public let body: String
    /// The activity's priority when the person was told.
    public let priority: Priority?
    public let activityID: UUID
    public let activity: ActivityNow?
    public let actions: [ActivityAction]
    public let createdAt: Date
    /// The digest it was gathered into, when its push went as one.
    public let digestID: UUID?
    public let engagement: InboxEngagement

    public init(
        id: UUID, event: String, app: AppKind, title: String, body: String, priority: Priority?, activityID: UUID, activity: ActivityNow?,
        actions: [ActivityAction], createdAt: Date, digestID: UUID?, engagement: InboxEngagement
    ) {
        self.id = id
        self.event = event
        self.app = app
        self.title = title
        self.body = body
        self.priority = priority
        self.activityID = activityID
        self.activity = activity
        self.actions = actions
        self.createdAt = createdAt
        self.digestID = digestID
        self.engagement = engagement
    }

    /// Whether a notification is an item of its recipient's inbox: one about an activity,
    /// whatever became of its push, but a Live Activity's push, a digest's own (its items are
    /// items), and one of an event the person turned off. (HeraldStore's `inboxItem` writes the
    /// same rule in SQL; its tests hold the two together.)
    public static func includes(activity: UUID?, isDigest: Bool, isLiveActivity: Bool, decision: NotificationDecision?) -> Bool {
        activity != nil && !isDigest && !isLiveActivity && decision != .preferenceOff
    }

    /// JSON names: identifiers end in `Id`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id, event, app, title, body, priority, activity, actions, createdAt, engagement
        case activityID = "activityId"
        case digestID = "digestId"
    }
}

/// What the badge and the inbox's counts say (docs/inbox.md): items neither read nor archived,
/// those of them not seen yet, and unread chat messages. The badge is `unread + chat`, the
/// same number in every push, frame and answer.
public struct InboxCounts: Sendable, Codable, Equatable {
    public let unseen: Int
    public let unread: Int
    public let chat: Int
    public var badge: Int { unread + chat }

    public init(unseen: Int, unread: Int, chat: Int) {
        self.unseen = unseen
        self.unread = unread
        self.chat = chat
    }

    enum CodingKeys: String, CodingKey { case unseen, unread, chat, badge }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            unseen: try container.decode(Int.self, forKey: .unseen), unread: try container.decode(Int.self, forKey: .unread),
            chat: try container.decode(Int.self, forKey: .chat))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(unseen, forKey: .unseen)
        try container.encode(unread, forKey: .unread)
        try container.encode(chat, forKey: .chat)
        try container.encode(badge, forKey: .badge)
    }
}
