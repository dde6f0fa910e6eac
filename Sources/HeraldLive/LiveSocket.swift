import Foundation
import HeraldCore
import NIOCore
import NIOWebSocket
import Synchronization

/// One live connection: who it speaks for, what it has been sent, and the frames it writes to
/// its channel. The hub puts frames in, `LiveFrameHandler` hands in what the app sends; no task
/// waits on a socket (BENCHMARKS.md: thousands of them on one server).
final class LiveSocket: Sendable {
    struct State {
        /// Frames written to the channel and not yet out.
        var queued = 0
        /// The newest position sent (frames at or below it are not sent again).
        var position: Int64
        /// Set once a close was queued: nothing more goes out.
        var closing = false
        var viewing: UUID?
        var foreground = false
        var flood: TokenBucket
        /// A heartbeat's ping went out and no pong came back yet.
        var awaitingPong = false
        /// Heartbeats that found the socket closing: at the second, its close is taken to be
        /// stuck (an app that stopped reading) and the connection is dropped.
        var beatsWhileClosing = 0
        /// What the app sent and the hub has not handled yet, in order.
        var inbox: [String] = []
        /// Whether a task is handling the inbox (one at a time, only while it has something).
        var handling = false
    }

    let id: UInt64
    let tenant: Tenant
    let person: Person
    let credentialID: UUID
    /// The console session it was opened in, if any: signing out closes it (4401).
    let consoleSession: UUID?
    let device: String?
    private let channel: any Channel
    private let state: Mutex<State>
    private let queueLimit: Int
    private let metrics: LiveMetrics

    init(
        id: UInt64, tenant: Tenant, person: Person, credentialID: UUID, consoleSession: UUID?, device: String?, after position: Int64,
        channel: any Channel,
        settings: LiveSettings, metrics: LiveMetrics
    ) {
        self.id = id
        self.tenant = tenant
        self.person = person
        self.credentialID = credentialID
        self.consoleSession = consoleSession
        self.device = device
        self.channel = channel
        self.queueLimit = settings.queueLimit
        self.metrics = metrics
        state = Mutex(State(position: position, flood: TokenBucket(rate: settings.floodRate, burst: settings.floodBurst, now: .now)))
    }

    var position: Int64 { state.withLock { $0.position } }
    var viewing: UUID? { state.withLock { $0.viewing } }
    var isForeground: Bool { state.withLock { $0.foreground } }
    var isClosing: Bool { state.withLock { $0.closing } }

    /// Sends a durable frame at `position` unless it was sent already. - Returns: whether it went
    /// out (false: already sent, closing, or the queue overflowed and the socket closes with 1013).
    @discardableResult
    func deliver(_ text: String, at position: Int64) -> Bool {
        let outcome = state.withLock { state -> Bool? in
            guard !state.closing, position > state.position else { return false }
            state.position = position
            guard state.queued < queueLimit else { return nil }
            state.queued += 1
            return true
        }
        switch outcome {
        case .some(true):
            write([text])
            return true
        case .some(false):
            return false
        case .none:
            metrics.slowClients.increment()
            close(code: LiveCloseCode.tryAgainLater, reason: "too many frames unread: resume with your cursor")
            return false
        }
    }

    /// Moves the position without sending (the catch-up reached it).
    func advance(to position: Int64) {
        state.withLock { $0.position = max($0.position, position) }
    }

    /// Sends a frame that is not stored (hello, presence, typing, errors, pong).
    func send(_ text: String) {
        send([text])
    }

    /// Sends frames that are not stored, together.
    func send(_ texts: [String]) {
        guard !texts.isEmpty else { return }
        let accepted = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.queued += texts.count
            return true
        }
        if accepted { write(texts) }
    }

    /// Writes text frames counted in `queued`, with one flush; they leave the count when the
    /// last is out (writes complete in order). On the channel's event loop they are written at
    /// once, like the control frames, so that nothing overtakes them (an error, then the close).
    private func write(_ texts: [String]) {
        let channel = self.channel
        let body: @Sendable () -> Void = {
            for text in texts.dropLast() {
                channel.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)), promise: nil)
            }
            let last = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: texts[texts.count - 1]))
            channel.writeAndFlush(last).whenComplete { _ in self.state.withLock { $0.queued -= texts.count } }
        }
        if channel.eventLoop.inEventLoop { body() } else { channel.eventLoop.execute(body) }
    }

    /// Answers the app's ping.
    func pong(_ data: ByteBuffer) {
        guard !isClosing else { return }
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .pong, data: data), promise: nil)
    }

    /// At this socket's heartbeat (the hub's, `LiveHub.beat`): a ping, or the close (4408)
    /// when the last ping went unanswered. A socket still here two heartbeats after its close
    /// was queued (an app that stopped reading, so the close never got out) is dropped.
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
        case .ping: channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "herald")), promise: nil)
        case .close: close(code: LiveCloseCode.heartbeatMissed, reason: "no answer to the heartbeat")
        case .drop: channel.close(promise: nil)
        case .none: break
        }
    }

    /// The app answered a ping.
    func ponged() {
        state.withLock { $0.awaitingPong = false }
    }

    /// Queues the closing frame; nothing goes out after it. The app has two seconds to answer
    /// with its own close (`LiveFrameHandler` ends the connection when it does); `answering`:
    /// this close is the answer to the app's, and the connection ends once it is out.
    func close(code: UInt16, reason: String, answering: Bool = false) {
        let first = state.withLock { state -> Bool in
            defer { state.closing = true }
            return !state.closing
        }
        guard first else { return }
        var data = ByteBuffer()
        data.write(webSocketErrorCode: WebSocketErrorCode(codeNumber: Int(code)))
        data.writeString(String(reason.utf8.prefix(120)) ?? "")
        let channel = self.channel
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)).whenComplete { _ in
            if answering {
                channel.close(promise: nil)
            } else {
                channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
            }
        }
    }

    /// Takes a token for an incoming frame: false when the app floods.
    func admitIncoming() -> Bool {
        state.withLock { $0.flood.take(at: .now) == nil }
    }

    /// Takes a whole message the app sent; `handle` is given the socket's messages one at a
    /// time, in order, by a task that lives only while there are some.
    func take(_ text: String, handle: @escaping @Sendable (String) async -> Void) {
        let start = state.withLock { state -> Bool in
            state.inbox.append(text)
            defer { state.handling = true }
            return !state.handling
        }
        guard start else { return }
        Task {
            while let next = self.state.withLock({ state -> String? in
                guard !state.inbox.isEmpty else {
                    state.handling = false
                    return nil
                }
                return state.inbox.removeFirst()
            }) {
                await handle(next)
            }
        }
    }

    /// Marks the connection gone: nothing more goes out.
    func ended() {
        state.withLock { $0.closing = true }
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
    static let protocolError: UInt16 = 1002
    static let invalidData: UInt16 = 1007
    static let policyViolation: UInt16 = 1008
    static let tooBig: UInt16 = 1009
    static let tryAgainLater: UInt16 = 1013
    /// The credential was revoked or expired.
    static let unauthorized: UInt16 = 4401
    /// No answer to the heartbeat.
    static let heartbeatMissed: UInt16 = 4408
}
