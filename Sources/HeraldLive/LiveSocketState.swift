import Foundation
import HeraldCore

/// One socket's decisions, as a value (docs/live-protocol.md): what it was sent (its position
/// in the feed), what waits to be written, its heartbeat and its close, what the app sent and
/// is not handled yet, and whether the app floods. Each `mutating` function takes one event and
/// says what to do; `LiveSocket` does it, under the lock that holds this.
public struct LiveSocketState: Sendable {
    /// What becomes of a durable frame offered to the socket.
    public enum Delivery: Sendable, Equatable {
        /// Write it (the position is the socket's now).
        case write
        /// Sent already, or the socket is closing: nothing.
        case skip
        /// Too many frames wait unread, for too long: close the socket (1013); it resumes by cursor.
        case overflow
    }

    /// What a heartbeat does to the socket.
    public enum Beat: Sendable, Equatable {
        case ping
        /// The last ping went unanswered: close (4408).
        case close
        /// Its close could not get out (an app that stopped reading): drop the connection.
        case drop
        case none
    }

    /// Frames written and not yet out.
    public private(set) var queued = 0
    /// The newest position sent: frames at or below it are not sent again.
    public private(set) var position: Int64
    /// A close was queued (or the connection is gone): nothing more goes out.
    public private(set) var closing = false
    private let queueLimit: Int
    /// Since when more than `queueLimit` frames have waited, if they do.
    private var overLimitSince: ContinuousClock.Instant?
    private var flood: TokenBucket
    private var awaitingPong = false
    private var beatsWhileClosing = 0
    /// What the app sent and the hub has not handled yet, in order.
    private var inbox: [String] = []
    /// Whether a task handles the inbox (one at a time, only while it has something).
    private var handling = false
    /// The most the inbox holds: past it the app sends faster than its frames are handled.
    private let inboxLimit: Int

    public init(
        position: Int64, queueLimit: Int, floodRate: Double, floodBurst: Double, inboxLimit: Int, now: ContinuousClock.Instant
    ) {
        self.position = position
        self.queueLimit = queueLimit
        self.inboxLimit = inboxLimit
        self.flood = TokenBucket(rate: floodRate, burst: floodBurst, now: now)
    }

    /// What becomes of a message the app sent.
    public enum Take: Sendable, Equatable {
        /// Queued; a handler must start (none runs).
        case start
        /// Queued behind others; the running handler takes it.
        case queued
        /// The inbox is full, or the socket closes: dropped. When full, close the socket (1008).
        case overflow
        case closing
    }

    /// A durable frame at `position`, at `now`. More than `queueLimit` frames waiting is a
    /// client that stopped reading once it lasts `overLimitGrace` (a burst handed to the
    /// connection in one round, such as the receipts of a large group's message to its sender,
    /// is out within it), or at once past `overLimitFactor` times the limit.
    public mutating func deliver(at position: Int64, now: ContinuousClock.Instant) -> Delivery {
        guard !closing, position > self.position else { return .skip }
        self.position = position
        if queued >= queueLimit {
            let since = overLimitSince ?? now
            overLimitSince = since
            guard now - since < Self.overLimitGrace, queued < queueLimit * Self.overLimitFactor else { return .overflow }
        }
        queued += 1
        return .write
    }

    /// How long more than the limit may wait before the socket closes.
    public static var overLimitGrace: Duration { .seconds(1) }
    /// How many times the limit closes the socket at once.
    public static var overLimitFactor: Int { 10 }

    /// The catch-up reached `position`: frames up to it count as sent.
    public mutating func advance(to position: Int64) {
        self.position = max(self.position, position)
    }

    /// Frames that are not stored (hello, presence, typing, errors). - Returns: whether they go.
    public mutating func send(_ count: Int) -> Bool {
        guard !closing else { return false }
        queued += count
        return true
    }

    /// Frames that were out (written, or their connection gone).
    public mutating func written(_ count: Int) {
        queued = max(0, queued - count)
        if queued < queueLimit { overLimitSince = nil }
    }

    /// A close is queued. - Returns: whether it is the first (only the first goes out).
    public mutating func close() -> Bool {
        defer { closing = true }
        return !closing
    }

    /// The connection is gone: nothing more goes out.
    public mutating func ended() {
        closing = true
    }

    /// The socket's heartbeat: a ping, the close when the last ping went unanswered, and a
    /// connection dropped when its close has waited two heartbeats.
    public mutating func beat() -> Beat {
        if closing {
            beatsWhileClosing += 1
            return beatsWhileClosing == 2 ? .drop : .none
        }
        defer { awaitingPong = true }
        return awaitingPong ? .close : .ping
    }

    /// The app answered a ping.
    public mutating func ponged() {
        awaitingPong = false
    }

    /// A message from the app. - Returns: false when the app floods (it is then closed).
    public mutating func admitIncoming(at now: ContinuousClock.Instant) -> Bool {
        flood.take(at: now) == nil
    }

    /// Takes a message to handle: at most `inboxLimit` wait; a closing socket's are dropped.
    public mutating func take(_ text: String) -> Take {
        guard !closing else { return .closing }
        guard inbox.count < inboxLimit else {
            inbox = []
            return .overflow
        }
        inbox.append(text)
        defer { handling = true }
        return handling ? .queued : .start
    }

    /// The next message for the running handler; nil ends it. A socket that closes leaves
    /// what it had waiting unhandled.
    public mutating func nextInbound() -> String? {
        if closing { inbox = [] }
        guard !inbox.isEmpty else {
            handling = false
            return nil
        }
        return inbox.removeFirst()
    }
}
