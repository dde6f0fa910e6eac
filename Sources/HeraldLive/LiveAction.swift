import Foundation
import HeraldCore

/// Something the live hub is to do, as its state machine said (`LiveStateMachine`): every event
/// of the machine answers a list of these, and `LiveHub.perform` is the one place they are done.
/// Generic over the socket, so that the machine's tests need no connection.
public enum LiveAction<Socket: Sendable>: Sendable {
    /// A round: new feed rows to give, or a socket to catch up.
    case round
    /// Record the presence of the people whose first socket here opened or last one closed
    /// (and any recording that failed).
    case recordPresence
    /// Tell the presence changes heard to the sockets that follow each person.
    case tellPresence
    /// Check every presence subscription against the access policy again.
    case recheckSubscriptions
    /// `presence` frames to write, each a socket and its changes.
    case presence([LivePresenceFrame<Socket>])
    /// The sockets whose heartbeat it is: a ping, or the close when the last went unanswered.
    case beat([Socket])
    /// No socket of the person views `conversation` any more.
    case stopViewing(Socket, conversation: UUID)
    /// No socket of the person says the app on `device` is in the foreground any more.
    case leaveForeground(Socket, device: String)
    /// Check the credentials the sockets hold: what ended since `since` (the database's time of
    /// the last check, less a margin), or the standing of every one (`since` nil), which also
    /// finds those removed outright.
    case checkCredentials(since: Date?)
    /// Tell the conversation's other participants that the socket's person types.
    case announceTyping(Socket, conversation: UUID)
    /// Stamp the server, take dead servers' people offline, renew what the sockets view.
    case upkeep
    /// Hand freed memory back to the system (many sockets opened or closed).
    case trim
    /// Remove feed rows older than the retention.
    case prune
    /// Close the sockets with `code` and `reason`.
    case close([Socket], code: UInt16, reason: String)
}

/// A `presence` frame to write: a socket, and every change since its last one.
public struct LivePresenceFrame<Socket: Sendable>: Sendable {
    public let socket: Socket
    public let changes: [LivePresenceChange]
}
