import Foundation
import HeraldCore
import HeraldStore

/// A frame the live channel sends (docs/live-protocol.md), encoded as the API encodes its objects.
public enum LiveFrame {
    struct Hello: Encodable {
        let type = "hello"
        let person: String
        let cursor: String
        let heartbeat: Int
    }

    struct Message: Encodable {
        let type = "message"
        let cursor: String
        let conversation: UUID
        let message: MessageRecord
    }

    struct Receipt: Encodable {
        let type = "receipt"
        let cursor: String
        let conversation: UUID
        let person: String
        let received: Int64?
        let read: Int64?
    }

    struct Conversation: Encodable {
        let type = "conversation"
        let cursor: String
        let conversation: ConversationRecord
    }

    struct Activity: Encodable {
        let type = "activity"
        let cursor: String
        let event: EventKind
        let activity: ActivityRecord
    }

    struct Notification: Encodable {
        let type = "notification"
        let cursor: String
        let notification: LiveNotification
    }

    /// An item added to the person's inbox (docs/inbox.md), with its `notification` frame.
    struct Inbox: Encodable {
        let type = "inbox"
        let cursor: String
        let item: InboxItem
    }

    /// Items of the person's inbox changed, on any of their devices.
    struct InboxStatus: Encodable {
        let type = "inbox.status"
        let cursor: String
        let ids: [UUID]
        let status: InboxEngagement.Status
        let at: Date
    }

    struct Badge: Encodable {
        let type = "badge"
        let count: Int
    }

    struct Presence: Encodable {
        let type = "presence"
        let people: [PresenceEntry]

        init(_ people: [PresenceEntry]) {
            self.people = people
        }
    }

    /// One person in a `presence` frame, and in `GET /v1/presence`'s answer: `lastSeen` is
    /// written even when null.
    public struct PresenceEntry: Encodable, Sendable {
        let person: String
        let online: Bool
        let lastSeen: Date?

        init(_ change: LivePresenceChange) {
            person = change.email
            online = change.online
            lastSeen = change.lastSeen
        }

        public init(_ presence: PersonPresence) {
            person = presence.email
            online = presence.presence.online
            lastSeen = presence.presence.lastSeen
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(person, forKey: .person)
            try container.encode(online, forKey: .online)
            try container.encode(lastSeen, forKey: .lastSeen)
        }

        enum CodingKeys: String, CodingKey { case person, online, lastSeen }
    }

    struct Typing: Encodable {
        let type = "typing"
        let conversation: UUID
        let person: String
    }

    struct Resync: Encodable {
        let type = "resync"
        let reason: String
    }

    struct Failure: Encodable {
        let type = "error"
        let code: String
        let detail: String
    }

    struct Pong: Encodable {
        let type = "pong"
    }

    static let encoder = HeraldJSONEncoder()

    /// The frame's text.
    static func text(_ frame: some Encodable) -> String {
        guard let data = try? encoder.encode(frame) else { return #"{"type":"error","code":"internal","detail":"unencodable"}"# }
        return String(decoding: data, as: UTF8.self)
    }

    /// A cursor as clients see it: opaque text.
    public static func cursor(_ position: Int64) -> String { String(position) }

    /// The position a client's cursor names, if it is one.
    public static func position(_ cursor: String) -> Int64? {
        guard cursor.unicodeScalars.count <= 19, cursor.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return Int64(cursor)
    }

    /// The type name a durable payload's frame has (for metrics).
    static func typeName(_ payload: LivePayload) -> String {
        switch payload {
        case .message: "message"
        case .receipt, .deliveryReceipts: "receipt"
        case .conversation: "conversation"
        case .activity: "activity"
        case .notification: "notification"
        case .inboxStatus: "inbox.status"
        }
    }
}
