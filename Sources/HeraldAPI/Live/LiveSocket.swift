import Foundation
import HeraldCore
import NIOCore
import NIOWebSocket
import Synchronization

/// One live connection: who it speaks for, what it has been sent, and its outgoing queue.
/// The hub puts frames in; `LiveConnection` writes them out and reads what the app sends.
final class LiveSocket: Sendable {
    /// What goes out, in order.
    enum Outgoing: Sendable {
        case text(String)
        case ping
        case pong(ByteBuffer)
        /// The last frame: a close with this code and reason.
        case close(code: UInt16, reason: String)
    }

    struct State {
        /// Frames put in the queue and not yet written.
        var queued = 0
        /// The newest position sent (frames at or below it are not sent again).
        var position: Int64
        /// Set once a close was queued: nothing more goes out.
        var closing = false
        var viewing: UUID?
        var foreground = false
        var flood: TokenBucket
        /// Received by the hub's catch-up: only then does it get the round's frames.
        var joined = false
        /// A heartbeat's ping went out and no pong came back yet.
        var awaitingPong = false
        /// Heartbeats that found the socket closing: at the second, its writer is taken to be
        /// stuck (an app that stopped reading) and the connection is dropped.
        var beatsWhileClosing = 0
    }

    let id: UInt64
    let tenant: Tenant
    let person: Person
    let credentialID: UUID
    let device: String?
    let outgoing: AsyncStream<Outgoing>
    private let continuation: AsyncStream<Outgoing>.Continuation
    private let state: Mutex<State>
    private let drop = Mutex<(@Sendable () -> Void)?>(nil)
    private let queueLimit: Int
    private let metrics: LiveMetrics

    init(
        id: UInt64, tenant: Tenant, person: Person, credentialID: UUID, device: String?, after position: Int64, settings: LiveSettings,
        metrics: LiveMetrics
    ) {
        self.id = id
        self.tenant = tenant
        self.person = person
        self.credentialID = credentialID
        self.device = device
        self.queueLimit = settings.queueLimit
        self.metrics = metrics
        (outgoing, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        state = Mutex(State(position: position, flood: TokenBucket(rate: settings.floodRate, burst: settings.floodBurst, now: .now)))
    }

    var position: Int64 { state.withLock { $0.position } }
    var viewing: UUID? { state.withLock { $0.viewing } }
    var isJoined: Bool { state.withLock { $0.joined } }
    var isForeground: Bool { state.withLock { $0.foreground } }

    /// Sends a durable frame at `position` unless it was sent already. - Returns: whether it went
    /// out (false: already sent, closing, or the queue overflowed and the socket closes with 1013).
    @discardableResult
    func deliver(_ text: String, at position: Int64) -> Bool {
        let outcome = state.withLock { state -> Bool? in
            guard !state.closing, position > state.position else { return false }
            state.position = position
            guard state.queued < queueLimit else {
                state.closing = true
                return nil
            }
            state.queued += 1
            return true
        }
        switch outcome {
        case .some(true):
            continuation.yield(.text(text))
            return true
        case .some(false):
            return false
        case .none:
            metrics.slowClients.increment()
            continuation.yield(.close(code: LiveCloseCode.tryAgainLater, reason: "too many frames unread: resume with your cursor"))
            continuation.finish()
            return false
        }
    }

    /// Moves the position without sending (the catch-up reached it).
    func advance(to position: Int64) {
        state.withLock { $0.position = max($0.position, position) }
    }

    func markJoined() {
        state.withLock { $0.joined = true }
    }

    /// Sends a frame that is not stored (hello, presence, typing, errors, pong).
    func send(_ text: String) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.queued += 1
            return true
        }
        if accepted { continuation.yield(.text(text)) }
    }

    func sendControl(_ item: Outgoing) {
        guard !state.withLock({ $0.closing }) else { return }
        continuation.yield(item)
    }

    /// At this socket's heartbeat (the hub's, `LiveHub.beat`): a ping, or the close (4408)
    /// when the last ping went unanswered. A socket still here two heartbeats after its close
    /// was queued has a writer that cannot write (the app stopped reading): it is dropped.
    func beat() {
        enum Step { case ping, close, drop, none }
        let step = state.withLock { state -> Step in
            if state.closing {
                state.beatsWhileClosing += 1
                return state.beatsWhileClosing == 2 ? .drop : .none
            }
            defer { state.awaitingPong = true }
            return state.awaitingPong ? .close : .ping
        }
        switch step {
        case .ping: sendControl(.ping)
        case .close: close(code: LiveCloseCode.heartbeatMissed, reason: "no answer to the heartbeat")
        case .drop: drop.withLock { $0 }?()
        case .none: break
        }
    }

    /// What drops the connection without a close frame (`beat`): set by `LiveConnection`.
    func whenDropped(_ body: @escaping @Sendable () -> Void) {
        drop.withLock { $0 = body }
    }

    /// The app answered a ping.
    func ponged() {
        state.withLock { $0.awaitingPong = false }
    }

    /// A frame was written.
    func written() {
        state.withLock { $0.queued -= 1 }
    }

    /// Queues the closing frame; nothing goes out after it.
    func close(code: UInt16, reason: String) {
        let first = state.withLock { state -> Bool in
            defer { state.closing = true }
            return !state.closing
        }
        guard first else { return }
        continuation.yield(.close(code: code, reason: reason))
        continuation.finish()
    }

    /// Ends the queue (the connection is gone).
    func finish() {
        state.withLock { $0.closing = true }
        continuation.finish()
    }

    /// Takes a token for an incoming frame: false when the app floods.
    func admitIncoming() -> Bool {
        state.withLock { $0.flood.take(at: .now) == nil }
    }

    func setViewing(_ conversation: UUID?) {
        state.withLock { $0.viewing = conversation }
    }

    func setForeground(_ value: Bool) {
        state.withLock { $0.foreground = value }
    }
}

/// The close codes the live channel uses (RFC 6455 §7.4 and the application range).
enum LiveCloseCode {
    static let goingAway: UInt16 = 1001
    static let policyViolation: UInt16 = 1008
    static let tooBig: UInt16 = 1009
    static let tryAgainLater: UInt16 = 1013
    /// The credential was revoked or expired.
    static let unauthorized: UInt16 = 4401
    /// No answer to the heartbeat.
    static let heartbeatMissed: UInt16 = 4408
}
