import HeraldTemplates

/// One notification for one device, whatever the provider (DESIGN.md §3).
public struct PushNotification: Sendable, Equatable {
    public var token: String
    public var title: String
    public var body: String
    /// A picture for the notification (a group's photo).
    public var imageURL: String?
    /// Deep-link data; strings only, never secrets.
    public var data: [String: String]
    /// Unread chat messages plus activities waiting on the recipient.
    public var badge: Int
    /// False when the recipient muted the conversation: no `sound` at all.
    public var sound: Bool
    /// Stacks related notifications: the conversation id or the activity id.
    public var threadID: String
    /// APNs `apns-collapse-id`, when a newer notification should replace an older one.
    public var collapseID: String?

    public init(
        token: String, message: RenderedMessage, imageURL: String? = nil, data: [String: String], badge: Int, sound: Bool,
        threadID: String, collapseID: String? = nil
    ) {
        self.token = token
        self.title = message.title
        self.body = message.body
        self.imageURL = imageURL
        self.data = data
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.collapseID = collapseID
    }
}
