import Foundation

/// One item of the person's inbox (docs/inbox.md in the Herald repository): a notification
/// about an activity, its words as the person was told them, and the activity as it stands
/// now with the actions the person may take on it now.
public struct InboxItem: Codable, Sendable, Hashable, Identifiable {
    /// The activity now (nil when the person may no longer see it).
    public struct ActivityNow: Codable, Sendable, Hashable {
        public var id: UUID
        public var name: String
        public var status: Activity.Status
        public var priority: Priority
        /// Its `ETag`: act on it with `transition(_:_:ifVersion:)`.
        public var version: Int
    }
    /// The notification's id: `notificationId` in its push, its id in history.
    public var id: UUID
    public var event: EventKind
    public var app: AppKind
    public var title: String
    public var body: String
    public var priority: Priority?
    public var activityId: UUID
    public var activity: ActivityNow?
    /// `start`, `approve`, `reject`, …: what the person may do now (none once it moved on).
    public var actions: [String]
    public var createdAt: Date
    public var digestId: UUID?
    public var engagement: Engagement

    /// Not read and not archived: counted in the badge.
    public var isUnread: Bool { engagement.read == nil && engagement.archived == nil }
}

/// What the person did with a notification, each with its time and device.
public struct Engagement: Codable, Sendable, Hashable {
    public struct Mark: Codable, Sendable, Hashable {
        public var at: Date
        public var deviceId: UUID?
    }
    public var seen: Mark?
    public var read: Mark?
    public var interacted: Mark?
    /// The action taken from the push (`interacted`).
    public var action: String?
    public var archived: Mark?
    public var opened: Mark?
    public var delivered: Mark?
}

/// `GET /v1/me/inbox/counts`: unseen and unread items, unread chat messages, and the badge
/// (unread items plus unread chat messages).
public struct InboxCounts: Codable, Sendable, Hashable {
    public var unseen: Int
    public var unread: Int
    public var chat: Int
    public var badge: Int
}

/// What the person does to items (`POST /v1/me/inbox/<mark>`).
public enum InboxMark: String, Sendable, CaseIterable {
    case seen, read, archive, unseen, unread, unarchive
}

/// What items became, in a mark's answer and the live `inbox.status` frame.
public struct InboxStatusChange: Codable, Sendable, Hashable {
    /// The items that changed.
    public var ids: [UUID]
    /// `seen`, `read`, `archived`, `unseen`, `unread` or `unarchived`.
    public var status: String
    public var at: Date
    /// The badge after it (absent from the live frame: a `badge` event follows it).
    public var badge: Int?
}

/// What a report about a push did: the events it caused (none when it was reported before),
/// and the badge after it.
public struct EngagementReport: Codable, Sendable, Hashable {
    public var notificationId: UUID
    public var events: [String]
    public var badge: Int
}
