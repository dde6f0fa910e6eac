import Foundation

/// What a notification says and how it behaves on the phone: written at fan-out, stored
/// with the notification, read back by the claim and handed to the provider unchanged.
public struct NotificationContent: Sendable, Equatable {
    public var title: String
    public var body: String
    /// Deep-link data (`PushPayload`); strings only, never secrets.
    public var data: PushPayload
    /// Unread chat messages plus activities waiting on the recipient.
    public var badge: Int
    /// False when the recipient muted the conversation: no `sound` at all.
    public var sound: Bool
    /// Stacks related notifications: the conversation id or the activity id.
    public var threadID: String
    /// A picture for the notification (a group's photo).
    public var imageURL: String?
    /// Set for a Live Activity's push: sent as an ActivityKit push, not an alert.
    public var liveActivity: LiveActivityContent? {
        get {
            guard case .content(let content)? = live else { return nil }
            return content
        }
        set { live = newValue.map(LiveActivityBox.content) }
    }
    /// Held by reference: every push's content is copied several times on its way to the
    /// wire, and the few Live Activity pushes would otherwise make every copy three times larger.
    private var live: LiveActivityBox?

    public init(
        title: String, body: String, data: PushPayload, badge: Int, sound: Bool, threadID: String, imageURL: String? = nil,
        liveActivity: LiveActivityContent? = nil
    ) {
        self.title = title
        self.body = body
        self.data = data
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.imageURL = imageURL
        self.live = liveActivity.map(LiveActivityBox.content)
    }

    /// What makes a newer push replace an older one on the phone (APNs `apns-collapse-id`;
    /// Android's `tag` is the thread already): the activity, for an activity's pushes, so
    /// the phone shows its newest state rather than a stack of stale ones. Chat messages
    /// have none: they stack by conversation.
    public var collapseKey: String? { data[.activityId] }

    /// The buttons the push offers (`aps.category`; in `data` for Android apps), as
    /// fan-out chose them: `NotificationCategory`.
    public var category: String? { data[.category] }

    /// A P0 activity's push: it breaks through quiet hours and Focus (APNs
    /// `interruption-level: time-sensitive`; Android pushes go at high priority already).
    public var isTimeSensitive: Bool { data[.priority] == Priority.p0.rawValue }

    /// The content as the push of notification `id` carries it: with its id
    /// (`PushPayload.Field.notificationId`), which the app reports its opening with; a Live
    /// Activity's push carries no `data`.
    public func sent(as id: UUID) -> NotificationContent {
        guard liveActivity == nil else { return self }
        var content = self
        content.data[.notificationId] = id.lowercasedString
        return content
    }
}

/// A Live Activity's content, by reference (see `NotificationContent.live`).
indirect enum LiveActivityBox: Sendable, Equatable {
    case content(LiveActivityContent)
}
