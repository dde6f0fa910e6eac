import Foundation

/// A recipient of an event: who, and on which app.
public typealias EventRecipient = ActivityEventPayload.Recipient

/// Direct (two people) or group (three or more).
public enum ConversationKind: String, Sendable, Codable, CaseIterable {
    case direct, group
}

/// The snapshot a `chat.message` event carries: everything needed to render its
/// notifications later, as it was when the message was sent.
public struct ChatEventPayload: Sendable, Codable, Equatable {
    public let event: EventKind
    public let conversationID: UUID
    public let messageID: UUID
    public let teamID: UUID
    public let isGroup: Bool
    /// The group's name; `nil` for a direct conversation or an unnamed group.
    public let groupName: String?
    public let photoURL: String?
    public let sender: PersonReference
    public let text: String
    public let recipients: [EventRecipient]
    /// When the sender sent it (their device's time), in milliseconds since the epoch.
    public let sentAtMilliseconds: Int64

    public init(
        conversationID: UUID, messageID: UUID, teamID: UUID, isGroup: Bool, groupName: String?, photoURL: String?,
        sender: PersonReference, text: String, recipients: [EventRecipient], sentAt: Date
    ) {
        self.event = .chatMessage
        self.conversationID = conversationID
        self.messageID = messageID
        self.teamID = teamID
        self.isGroup = isGroup
        self.groupName = groupName
        self.photoURL = photoURL
        self.sender = sender
        self.text = text
        self.recipients = recipients
        self.sentAtMilliseconds = Int64((sentAt.timeIntervalSince1970 * 1000).rounded())
    }

    public var sentAt: Date { Date(timeIntervalSince1970: Double(sentAtMilliseconds) / 1000) }
}
