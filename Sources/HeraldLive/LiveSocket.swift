import Foundation
import HeraldCore
import Synchronization

/// One live connection: who it speaks for, and the frames it writes. Its decisions are
/// `LiveSocketState`'s, under one lock: every call here is one event. The hub puts frames in,
/// the app's frames come through `take`; no task waits on a socket (thousands of them on one
/// server), a task handles the app's frames only while there are some.
public final class LiveSocket: Sendable {
    public let id: UInt64
    public let tenant: Tenant
    public let person: Person
    public let credentialID: UUID
    public let credentialKind: CredentialKind
    /// The console session it was opened in, if any: signing out closes it (4401).
    public let consoleSession: UUID?
    public let device: String?
    private let connection: any LiveConnection
    private let state: Mutex<LiveSocketState>
    private let metrics: LiveMetrics

    init(
        id: UInt64, plan: LivePlan, after position: Int64, connection: any LiveConnection, settings: LiveSettings, metrics: LiveMetrics
    ) {
        self.id = id
        self.tenant = plan.tenant
        self.person = plan.person
        self.credentialID = plan.credentialID
        self.credentialKind = plan.credentialKind
        self.consoleSession = plan.consoleSession
        self.device = plan.device
        self.connection = connection
        self.metrics = metrics
        state = Mutex(
            LiveSocketState(
                position: position, queueLimit: settings.queueLimit, floodRate: settings.floodRate, floodBurst: settings.floodBurst,
                inboxLimit: settings.inboxLimit, now: .now))
    }

    var position: Int64 { state.withLock { $0.position } }
    public var isClosing: Bool { state.withLock { $0.closing } }

    /// Sends a durable frame at `position` unless it was sent already. - Returns: whether it went
    /// out (false: already sent, closing, or the queue overflowed and the socket closes with 1013).
    @discardableResult
    func deliver(_ text: String, at position: Int64) -> Bool {
        switch state.withLock({ $0.deliver(at: position, now: .now) }) {
        case .write:
            write([text])
            return true
        case .skip:
            return false
        case .overflow:
            metrics.slowClients.increment()
            close(code: LiveCloseCode.tryAgainLater, reason: "too many frames unread: resume with your cursor")
            return false
        }
    }

    /// Moves the position without sending (the catch-up reached it).
    func advance(to position: Int64) {
        state.withLock { $0.advance(to: position) }
    }

    /// Sends a frame that is not stored (hello, presence, typing, errors, pong).
    func send(_ text: String) {
        send([text])
    }

    /// Sends frames that are not stored, together.
    func send(_ texts: [String]) {
        guard !texts.isEmpty, state.withLock({ $0.send(texts.count) }) else { return }
        write(texts)
    }

    private func write(_ texts: [String]) {
        connection.write(texts) { self.state.withLock { $0.written(texts.count) } }
    }

    /// Answers the app's ping.
    public func pong(_ data: [UInt8]) {
        guard !isClosing else { return }
        connection.pong(data)
    }

    /// At this socket's heartbeat (`LiveHub.beat`).
    func beat() {
        switch state.withLock({ $0.beat() }) {
        case .ping: connection.ping()
        case .close: close(code: LiveCloseCode.heartbeatMissed, reason: "no answer to the heartbeat")
        case .drop: connection.drop()
        case .none: break
        }
    }

    /// The app answered a ping.
    public func ponged() {
        state.withLock { $0.ponged() }
    }

    /// Queues the closing frame; nothing goes out after it. `answering`: this close answers the
    /// app's, and the connection ends once it is out.
    public func close(code: UInt16, reason: String, answering: Bool = false) {
        guard state.withLock({ $0.close() }) else { return }
        connection.close(code: code, reason: String(reason.utf8.prefix(120)) ?? "", answering: answering)
    }

    /// Takes a token for an incoming message: false when the app floods.
    public func admitIncoming() -> Bool {
        state.withLock { $0.admitIncoming(at: .now) }
    }

    /// Takes a whole message the app sent; `handle` is given the socket's messages one at a
    /// time, in order, by a task that lives only while there are some, and none once the socket
    /// closes. - Returns: false when too many wait unhandled (the caller closes the socket).
    public func take(_ text: String, handle: @escaping @Sendable (String) async -> Void) -> Bool {
        switch state.withLock({ $0.take(text) }) {
        case .overflow: return false
        case .queued, .closing: return true
        case .start:
            Task {
                while let next = self.state.withLock({ $0.nextInbound() }) {
                    await handle(next)
                }
            }
            return true
        }
    }

    /// Marks the connection gone: nothing more goes out.
    public func ended() {
        state.withLock { $0.ended() }
    }
}
