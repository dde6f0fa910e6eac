import HeraldCore
import HeraldTemplates

/// One notification for one device, whatever the provider (docs/apps.md): its content
/// (read as `notification.title`, `.badge`, …) and where it goes.
@dynamicMemberLookup
public struct PushNotification: Sendable, Equatable {
    /// The device's registration token, or (FCM, `address: .fid`) its installation id.
    public var token: String
    public var address: DeviceAddress
    public var content: NotificationContent
    /// APNs `apns-collapse-id`, Web Push `Topic`: when a newer notification should replace an older one.
    public var collapseID: String?
    /// A browser's subscription (provider `webpush`; `token` is its endpoint).
    public var subscription: WebPushSubscription?
    /// An email's recipient and words (provider `email`; `token` is the address).
    public var mail: MailRecipient?

    public init(
        token: String, address: DeviceAddress = .token, content: NotificationContent, collapseID: String? = nil,
        subscription: WebPushSubscription? = nil
    ) {
        self.token = token
        self.address = address
        self.content = content
        self.collapseID = collapseID
        self.subscription = subscription
    }

    public init(
        token: String, message: RenderedMessage, imageURL: String? = nil, data: PushPayload, badge: Int, sound: Bool,
        threadID: String, collapseID: String? = nil
    ) {
        self.init(
            token: token,
            content: NotificationContent(
                title: message.title, body: message.body, data: data, badge: badge, sound: sound, threadID: threadID, imageURL: imageURL),
            collapseID: collapseID)
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<NotificationContent, Value>) -> Value {
        get { content[keyPath: field] }
        set { content[keyPath: field] = newValue }
    }
}
