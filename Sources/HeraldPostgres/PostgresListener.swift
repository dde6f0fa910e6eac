import CLibPQ
import Foundation
import HeraldLoops
import Logging
import Synchronization

/// LISTENs on channels over a connection of its own, on a thread of its own, and
/// reconnects by itself: at once after a lost connection, then waiting longer after each
/// attempt that fails (`RetryPause`, at most 2 s). A database that stays away is logged once,
/// then once a minute with the count (`FailureLog`), and yields one `.disconnected`.
///
/// Events arrive on `events`. After a reconnect it yields `.connected(reconnected: true)`:
/// notifications sent while it was away are lost, so the user should look for missed work.
/// The thread ends at `stop()`, or when nobody reads `events` any more.
public final class PostgresListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// Listening; `reconnected` is true after a lost connection came back.
        case connected(reconnected: Bool)
        /// The connection was lost; the listener is trying again.
        case disconnected(reason: String)
        case notification(channel: String, payload: String)
    }

    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let configuration: PostgresConfiguration
    private let channels: [String]
    private let failures: FailureLog
    private let logger: Logger
    private let stopping = Mutex(false)
    private let wakePipe: (read: Int32, write: Int32)

    /// Starts listening at once.
    public init(configuration: PostgresConfiguration, channels: [String], logger: Logger) {
        self.configuration = configuration
        self.channels = channels
        self.logger = logger
        self.failures = FailureLog("listening for \(channels.joined(separator: ", "))", logger: logger)
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(10_000))
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        wakePipe = (fds[0], fds[1])
        Thread.start(named: "herald.listen") { [self] in self.loop() }
        continuation.onTermination = { [weak self] _ in self?.stop() }
    }

    /// Failed connection attempts in a row now (0 while listening).
    public var failuresInARow: Int { failures.failures }

    /// Stops listening and finishes `events`. Safe to call twice.
    public func stop() {
        let already = stopping.withLock { state -> Bool in
            defer { state = true }
            return state
        }
        guard !already else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    private var isStopping: Bool { stopping.withLock { $0 } }

    private func loop() {
        var everConnected = false
        while !isStopping {
            do {
                let (handle, sink) = try PostgresConnection.openHandle(configuration, logger: logger)
                defer {
                    PQfinish(handle)
                    sink.release()
                }
                try listen(on: handle)
                continuation.yield(.connected(reconnected: everConnected))
                everConnected = true
                failures.succeeded()
                if let reason = watch(handle) {
                    // Once listening, a lost connection is tried again at once.
                    logger.warning("listener connection lost", metadata: ["reason": "\(reason)"])
                    continuation.yield(.disconnected(reason: reason))
                    continue
                }
            } catch {
                if isStopping { break }
                if failures.failed(error) == 1 { continuation.yield(.disconnected(reason: "\(error)")) }
                pause(RetryPause.after(failures: failures.failures))
            }
        }
        close(wakePipe.read)
        close(wakePipe.write)
        continuation.finish()
    }

    private func listen(on handle: OpaquePointer) throws {
        let sql = channels.map { "LISTEN " + PostgresQuery.quoteIdentifier($0) }.joined(separator: "; ")
        guard !sql.isEmpty else { return }
        _ = try PostgresConnection.rows(from: PQexec(handle, sql), connection: handle, query: sql)
    }

    /// Delivers notifications until the connection fails (its reason) or `stop()` (nil).
    private func watch(_ handle: OpaquePointer) -> String? {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return "no socket" }
        while !isStopping {
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)
            ]
            let ready = poll(&fds, 2, 1000)
            if ready < 0 {
                if errno == EINTR { continue }
                return "poll failed: errno \(errno)"
            }
            if fds[1].revents != 0 { return nil }
            if ready == 0 { continue }
            if PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK {
                return firstLine(of: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
            }
            while let notification = PQnotifies(handle) {
                let channel = String(cString: notification.pointee.relname)
                let payload = String(cString: notification.pointee.extra)
                PQfreemem(notification)
                continuation.yield(.notification(channel: channel, payload: payload))
            }
        }
        return nil
    }

    /// Sleeps, but wakes at once on `stop()`.
    private func pause(_ duration: Duration) {
        let milliseconds = Int32(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        var fds = [pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, max(1, milliseconds))
    }
}
