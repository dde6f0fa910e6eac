import Foundation

/// What a live session hands the app, in the order it happened (docs/live-protocol.md).
public enum LiveEvent: Sendable, Equatable {
    /// The connection's state changed.
    case connection(ConnectionState)
    /// A chat message was stored, the person's own included (sent from another device, or
    /// from the outbox).
    case message(conversation: UUID, message: Message)
    /// A participant's apps received, or they read, up to a sequence.
    case receipt(Receipt)
    /// A conversation was created, renamed, or someone joined or left.
    case conversation(Conversation)
    /// An activity the person may see moved on (`event`: `activity.started`, …).
    case activity(event: String, activity: Activity)
    /// The in-app banner: the words a push would carry, whether or not one was sent.
    case notification(InAppNotification)
    /// An item added to the person's inbox (right after its `notification`).
    case inboxItem(InboxItem)
    /// Items of the person's inbox changed, on any of their devices (a read on the phone
    /// clears it on the laptop); a `badge` follows.
    case inboxStatus(InboxStatusChange)
    /// The person's badge: unread inbox items plus unread chat messages.
    case badge(Int)
    /// Presence of people this session follows changed.
    case presence([Presence])
    /// Someone types in a conversation.
    case typing(conversation: UUID, person: String)
    /// The session was away longer than the server keeps: reload what is shown from REST.
    case resync(reason: String)
    /// One of the person's own messages moved on: sent → delivered → read.
    case status(conversation: UUID, message: UUID, sequence: Int64, status: MessageStatus)
    /// The server refused something the app sent (`code`: `not_found`, `too_many`, …).
    case refused(code: String, detail: String)
}

/// Where the connection stands.
public enum ConnectionState: Sendable, Equatable {
    case connecting
    /// Open, speaking for `person`.
    case connected(person: String)
    /// Closed; the next attempt is in `retryIn` (or sooner: `networkAvailable()`, `foreground(true)`).
    case waiting(retryIn: Duration, closeCode: Int?)
    /// Over for good: `unauthorized` (sign in again) or `stopped` (the app stopped it).
    case ended(EndReason)
}

public enum EndReason: Sendable, Equatable {
    /// The credential was revoked or expired (close 4401, or a 401 on connecting).
    case unauthorized
    /// The server refused the connection in a way that asking again cannot change (a 422
    /// naming `device`, a 400, a 404 or 426 from a proxy): the status and the problem's detail.
    case refused(status: Int, detail: String)
    case stopped
}

/// Where a live session is (`LiveSession.state`, for a status line).
public enum LiveSessionState: Sendable, Equatable {
    case idle
    case connecting(attempt: Int)
    case open(person: String)
    case waiting(attempt: Int)
    case ended(EndReason)
}

/// `receipt`: the highest sequence a participant's apps received and read.
public struct Receipt: Sendable, Equatable, Decodable {
    public var conversation: UUID
    public var person: String
    public var received: Int64?
    public var read: Int64?

    public init(conversation: UUID, person: String, received: Int64?, read: Int64?) {
        self.conversation = conversation
        self.person = person
        self.received = received
        self.read = read
    }
}

/// `notification`: an activity notification's banner.
public struct InAppNotification: Sendable, Equatable, Decodable {
    public var id: UUID
    public var event: EventKind
    public var title: String
    public var body: String
    public var priority: Priority?
    public var activityId: UUID?
    public var badge: Int?
}
