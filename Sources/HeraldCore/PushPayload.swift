import Foundation

/// What a push tells the app beside its words: the string `data` every provider carries (FCM
/// `data`, beside `aps` on APNs, `data` in a Web Push message), stored with the notification
/// and sent as it is. The keys are `Field`'s, and docs/apps.md ("What a push carries") lists
/// exactly these (a test holds them together). Fan-out, digests and reminders make it here;
/// the providers read it through `Field`.
public struct PushPayload: Sendable, Hashable {
    /// The keys apps read. One rule names them: lower camel case, an id ends in `Id` (a list of
    /// ids in `Ids`). The chat keys the first apps shipped with keep their spelling
    /// (`conversationID`, `messageID`, `senderID`): `Field.shippedSpellings`.
    public enum Field: String, Sendable, CaseIterable {
        /// `activity_assigned`, …, `new_message` or `digest` (`EventKind.payloadType`).
        case type
        case activityId, teamId, priority, status
        /// The activity's version after the event (its `ETag`), for a button's `If-Match`.
        case version
        /// The buttons the push offers (`NotificationCategory`).
        case category
        case conversationID, messageID, senderID, isGroup
        /// When the message was sent, in milliseconds since 1970.
        case timestamp
        case digestId, count
        /// A digest's items, comma-separated; left out first when the push would not fit.
        case notificationIds
        /// A badge update's count (`type: badge`, a push that shows nothing).
        case badge
        /// This push's own notification (its inbox item, its id in history): the app reports
        /// the push's opening with it (docs/inbox.md). Added when the push is sent.
        case notificationId

        /// The keys that kept the spelling apps already read, outside the rule.
        public static let shippedSpellings: Set<Field> = [.conversationID, .messageID, .senderID]
        /// What the app can fetch by another key: left out before any word is shortened
        /// (a digest's items, which `digestId` finds).
        public static let byReference: [Field] = [.notificationIds]
    }

    /// The value `digest` of `type`.
    public static let digestType = "digest"

    /// The fields as sent.
    public private(set) var fields: [String: String]

    public init(fields: [String: String] = [:]) {
        self.fields = fields
    }

    public subscript(key: Field) -> String? {
        get { fields[key.rawValue] }
        set { fields[key.rawValue] = newValue }
    }

    /// A field by its name as sent (a test, or a key a newer version wrote).
    public subscript(name: String) -> String? {
        get { fields[name] }
        set { fields[name] = newValue }
    }

    /// An activity event's push (a status change, a reminder, an escalation, a deadline notice).
    public static func activity(
        _ event: EventKind, activityID: UUID, teamID: UUID, priority: Priority, status: ActivityStatus, version: Int?
    ) -> PushPayload {
        var payload = PushPayload()
        payload[.type] = event.payloadType
        payload[.activityId] = activityID.lowercasedString
        payload[.teamId] = teamID.lowercasedString
        payload[.priority] = priority.rawValue
        payload[.status] = status.rawValue
        payload[.version] = version.map(String.init)
        return payload
    }

    /// The same push as it goes to one app: the buttons its recipient may use there.
    public func offering(_ category: NotificationCategory?) -> PushPayload {
        var payload = self
        payload[.category] = category?.rawValue
        return payload
    }

    /// A chat message's push.
    public static func chatMessage(
        conversationID: UUID, messageID: UUID, senderID: UUID, isGroup: Bool, sentAtMilliseconds: Int64
    ) -> PushPayload {
        var payload = PushPayload()
        payload[.type] = EventKind.chatMessage.payloadType
        payload[.conversationID] = conversationID.lowercasedString
        payload[.messageID] = messageID.lowercasedString
        payload[.senderID] = senderID.lowercasedString
        payload[.isGroup] = isGroup ? "true" : "false"
        payload[.timestamp] = String(sentAtMilliseconds)
        return payload
    }

    /// A digest's push: its id, its items, and whose it is (a team's or a conversation's).
    public static func digest(id: UUID, notificationIDs: [UUID], teamID: UUID?, conversationID: UUID?) -> PushPayload {
        var payload = PushPayload()
        payload[.type] = digestType
        payload[.digestId] = id.lowercasedString
        payload[.count] = String(notificationIDs.count)
        payload[.notificationIds] = notificationIDs.map(\.lowercasedString).joined(separator: ",")
        payload[.teamId] = teamID?.lowercasedString
        payload[.conversationID] = conversationID?.lowercasedString
        return payload
    }

    /// Whether it is a digest's push.
    public var isDigest: Bool { self[.type] == Self.digestType }

    /// The value `badge` of `type`: a push that only sets the app's badge (docs/inbox.md).
    public static let badgeType = "badge"

    /// A badge update's push: the count, and nothing to show.
    public static func badge(_ count: Int) -> PushPayload {
        var payload = PushPayload()
        payload[.type] = badgeType
        payload[.badge] = String(count)
        return payload
    }

    /// Whether it only sets the badge (no words, no sound: each channel sends it silently).
    public var isBadgeOnly: Bool { self[.type] == Self.badgeType }

    /// Where a page opens the push (Web Push's `navigate`), relative to the web app's origin:
    /// the activity, the conversation, or the app's start page (a digest, anything else).
    public var path: String {
        if !isDigest {
            if let activity = self[.activityId] { return "/activities/\(activity)" }
            if let conversation = self[.conversationID] { return "/conversations/\(conversation)" }
        }
        return "/"
    }
}

extension PushPayload: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(fields: Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension PushPayload: Codable {
    /// Encoded as the flat object of strings it is sent as.
    public init(from decoder: any Decoder) throws {
        self.init(fields: try decoder.singleValueContainer().decode([String: String].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }
}
