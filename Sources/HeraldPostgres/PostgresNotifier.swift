import CLibPQ
import Foundation
import HeraldLoops
import Logging
import Synchronization

/// One process's LISTEN connection, shared by every part of it that wants PostgreSQL's
/// notifications (the dispatcher's wake-ups, the live channel's, the webhooks'): each
/// `listen(to:)` is a subscription to some channels, with its own stream of events, and the
/// connection LISTENs to every channel some subscription wants, and to no other. A process
/// that serves and delivers holds one listening connection, not one a part.
///
/// The connection is made on a thread of its own when the first subscription comes and
/// closed when the last one goes. Lost, it is made again at once, then after a longer wait
/// each time it cannot be (`RetryPause`, at most 2 s); a database that stays away is logged
/// once, then once a minute with the count (`FailureLog`), and each subscription is told
/// `.disconnected` once. Who listens to what is `NotifierStateMachine`'s to decide.
public final class PostgresNotifier: Sendable {
    private struct State {
        var machine = NotifierStateMachine()
        var streams: [Int: AsyncStream<PostgresListener.Event>.Continuation] = [:]
        var next = 0
        /// The running thread's wake-up pipe (write end).
        var wake: Int32?
    }

    private let configuration: PostgresConfiguration
    private let logger: Logger
    private let failures: FailureLog
    private let state = Mutex(State())

    public init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.failures = FailureLog("listening for notifications", logger: logger)
    }

    /// Failed connection attempts in a row now (0 while listening).
    public var failuresInARow: Int { failures.failures }

    /// Subscribes to `channels`: the events come on the listener's stream until it is
    /// stopped (or nobody reads it any more).
    public func listen(to channels: [String]) -> PostgresListener {
        PostgresListener(notifier: self, channels: channels)
    }

    /// Registers a subscription's stream. - Returns: its id, for `unsubscribe`.
    func subscribe(_ channels: Set<String>, _ stream: AsyncStream<PostgresListener.Event>.Continuation) -> Int {
        let (id, action) = state.withLock { state -> (Int, NotifierStateMachine.Action) in
            state.next += 1
            state.streams[state.next] = stream
            let action = state.machine.subscribe(state.next, to: channels)
            if action == .wakeThread, let wake = state.wake { Self.poke(wake) }
            return (state.next, action)
        }
        switch action {
        case .startThread: startThread()
        case .tellConnected(let reconnected): stream.yield(.connected(reconnected: reconnected))
        case .wakeThread, .none: break
        }
        return id
    }

    /// Ends a subscription: its stream finishes, and its channels are let go of once nobody
    /// else wants them.
    func unsubscribe(_ id: Int) {
        let stream = state.withLock { state -> AsyncStream<PostgresListener.Event>.Continuation? in
            let stream = state.streams.removeValue(forKey: id)
            if state.machine.unsubscribe(id) == .wakeThread, let wake = state.wake { Self.poke(wake) }
            return stream
        }
        stream?.finish()
    }

    private static func poke(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    private func startThread() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            logger.error("cannot listen for notifications: no pipe (errno \(errno)); polling only")
            return
        }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        let (read, write) = (fds[0], fds[1])
        state.withLock { $0.wake = write }
        Thread.start(named: "herald.listen") { [self] in
            run(wakeFrom: read)
            close(read)
            close(write)
        }
    }

    // MARK: The thread

    private func run(wakeFrom pipe: Int32) {
        while true {
            let unwanted = state.withLock { state -> Bool in
                guard state.machine.stopIfUnwanted() else { return false }
                state.wake = nil
                return true
            }
            if unwanted { return }
            let handle: OpaquePointer
            let sink: Unmanaged<NoticeSink>
            do {
                (handle, sink) = try PostgresConnection.openHandle(configuration, logger: logger)
            } catch {
                if failures.failed(error) == 1 { tellEveryone(.disconnected(reason: "\(error)")) }
                pause(RetryPause.after(failures: failures.failures), wakeFrom: pipe)
                continue
            }
            defer {
                PQfinish(handle)
                sink.release()
            }
            let (channels, tell) = state.withLock { $0.machine.connected() }
            if let reason = execute(listen: channels, unlisten: [], on: handle) {
                lost(reason)
                continue
            }
            failures.succeeded()
            self.tell(tell)
            guard let reason = watch(handle, wakeFrom: pipe) else { return }
            lost(reason)
        }
    }

    private func lost(_ reason: String) {
        logger.warning("listener connection lost", metadata: ["reason": "\(reason)"])
        let ids = state.withLock { $0.machine.disconnected() }
        tell(ids, .disconnected(reason: reason))
    }

    /// Tells subscribers they listen now (`reconnected`: they were told so before, and may
    /// have missed notifications meanwhile).
    private func tell(_ subscribers: [Int: Bool]) {
        let streams = state.withLock { state in subscribers.compactMap { id, told in state.streams[id].map { ($0, told) } } }
        for (stream, told) in streams { stream.yield(.connected(reconnected: told)) }
    }

    private func tell(_ ids: [Int], _ event: PostgresListener.Event) {
        let streams = state.withLock { state in ids.compactMap { state.streams[$0] } }
        for stream in streams { stream.yield(event) }
    }

    private func tellEveryone(_ event: PostgresListener.Event) {
        let streams = state.withLock { Array($0.streams.values) }
        for stream in streams { stream.yield(event) }
    }

    /// LISTENs and UNLISTENs in one round trip. - Returns: why the connection failed, or nil.
    private func execute(listen: Set<String>, unlisten: Set<String>, on handle: OpaquePointer) -> String? {
        let sql =
            (unlisten.sorted().map { "UNLISTEN " + PostgresQuery.quoteIdentifier($0) }
            + listen.sorted().map { "LISTEN " + PostgresQuery.quoteIdentifier($0) }).joined(separator: "; ")
        guard !sql.isEmpty else { return nil }
        do {
            _ = try PostgresConnection.rows(from: PQexec(handle, sql), connection: handle, query: sql)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Delivers notifications, and makes the subscriptions' changes, until the connection
    /// fails (its reason) or nobody listens any more (nil).
    private func watch(_ handle: OpaquePointer, wakeFrom pipe: Int32) -> String? {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return "no socket" }
        while true {
            var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return "poll failed: errno \(errno)"
            }
            if fds[1].revents != 0 {
                drain(pipe)
                let changes = state.withLock { state -> NotifierStateMachine.Changes in
                    let changes = state.machine.changes()
                    if changes.stop { state.wake = nil }
                    return changes
                }
                if changes.stop { return nil }
                if let reason = execute(listen: changes.listen, unlisten: changes.unlisten, on: handle) { return reason }
                tell(changes.tell)
            }
            if fds[0].revents != 0 {
                if PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK {
                    return firstLine(of: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
                }
                while let notification = PQnotifies(handle) {
                    let channel = String(cString: notification.pointee.relname)
                    let payload = String(cString: notification.pointee.extra)
                    PQfreemem(notification)
                    let streams = state.withLock { state in state.machine.recipients(of: channel).compactMap { state.streams[$0] } }
                    for stream in streams { stream.yield(.notification(channel: channel, payload: payload)) }
                }
            }
        }
    }

    private func drain(_ pipe: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        _ = read(pipe, &bytes, bytes.count)
    }

    /// Sleeps, but wakes at once when a subscription comes or goes.
    private func pause(_ duration: Duration, wakeFrom pipe: Int32) {
        let milliseconds = Int32(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        var fds = [pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)]
        if poll(&fds, 1, max(1, milliseconds)) > 0 { drain(pipe) }
    }
}
