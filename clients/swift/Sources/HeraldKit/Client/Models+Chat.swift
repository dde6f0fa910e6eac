import Foundation

/// A conversation: one to one (`direct`) or a group.
public struct Conversation: Codable, Sendable, Hashable, Identifiable {
    public struct Participant: Codable, Sendable, Hashable {
        public var person: PersonReference
        public var muted: Bool
        public var lastReadSequence: Int64
        public var lastReceivedSequence: Int64
        public var viewing: Bool
        public var online: Bool
        public var lastSeen: Date?
    }
    public var id: UUID
    public var team: TeamReference?
    /// `direct` or `group`.
    public var kind: String
    public var name: String?
    public var photoUrl: String?
    public var participants: [Participant]
    public var unread: Int
    public var createdAt: Date
}

/// A chat message as stored.
public struct Message: Codable, Sendable, Hashable, Identifiable {
    public var id: UUID
    /// Its place in the conversation: 1, 2, 3, … as stored.
    public var sequence: Int64
    public var sender: PersonReference
    public var text: String
    public var isSystem: Bool
    /// The sender app's id for it: sending the same one twice stores it once.
    public var clientId: String?
    public var sentAt: Date
    public var storedAt: Date
    /// With `receipts: true`.
    public var receivedBy: [String]?
    public var readBy: [String]?
    public var status: MessageStatus?
}

/// A message's progress as its sender sees it.
public enum MessageStatus: String, Codable, Sendable, Comparable {
    /// Not yet accepted by the server (the outbox holds it).
    case pending
    /// Stored.
    case sent
    /// Every other participant's app received it.
    case delivered
    /// Every other participant read it.
    case read

    private var rank: Int {
        switch self {
        case .pending: 0
        case .sent: 1
        case .delivered: 2
        case .read: 3
        }
    }
    public static func < (left: MessageStatus, right: MessageStatus) -> Bool { left.rank < right.rank }
}

/// Someone's presence: online while a live socket of theirs answers heartbeats.
public struct Presence: Codable, Sendable, Hashable {
    /// Their email.
    public var person: String
    public var online: Bool
    public var lastSeen: Date?
}

/// `GET /v1/presence`.
public struct PresenceList: Codable, Sendable, Hashable {
    public var people: [Presence]
    /// Names (as given) of nobody whose presence the caller may see.
    public var unknown: [String]
}
