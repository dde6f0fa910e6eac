import CLibPQ
import Foundation
import Synchronization

/// One thread that waits, with epoll, for the sockets of every connection in the process
/// that waits for its server, and wakes the task that waits on each.
///
/// A connection's calls run on the task that makes them: libpq sends without blocking, and
/// the task suspends here only while the server's answer has not arrived. A round trip
/// costs one wake-up of this thread (which takes every socket that became ready at once)
/// and one of the task, where a thread per connection cost two of its own.
final class PostgresPoller: Sendable {
    /// What a wait is for.
    struct Readiness: OptionSet, Sendable {
        let rawValue: UInt32
        static let readable = Readiness(rawValue: EPOLLIN.rawValue)
        static let writable = Readiness(rawValue: EPOLLOUT.rawValue)
    }

    /// The process's poller, started by its first use.
    static let shared = PostgresPoller()

    private let epoll: Int32
    /// The task waiting on each socket (a socket has one waiter at most: its connection is
    /// used by one task at a time).
    private let waiting = Mutex<[Int32: CheckedContinuation<Void, any Error>]>([:])

    private init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { return }
        Thread.start(named: "herald.postgres") { [self] in loop() }
    }

    /// Suspends until `socket` is ready for `readiness` (or has failed: the caller's next
    /// libpq call then says how).
    /// - Throws: `PostgresError` of kind `.connection` if the socket cannot be watched.
    func wait(for socket: Int32, _ readiness: Readiness) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            waiting.withLock { $0[socket] = continuation }
            // One-shot: the socket is watched until its first event, then left alone until
            // the next wait (level-triggered, so an answer already there fires at once).
            var event = epoll_event()
            event.events = readiness.rawValue | EPOLLONESHOT.rawValue
            event.data.fd = socket
            var status = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event)
            if status != 0 && errno == ENOENT { status = epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) }
            if status != 0 {
                let reason = String(cString: strerror(errno))
                if let waiter = waiting.withLock({ $0.removeValue(forKey: socket) }) {
                    waiter.resume(throwing: PostgresError(kind: .connection, message: "cannot wait for PostgreSQL's answer: \(reason)"))
                }
            }
        }
    }

    /// Stops watching `socket` (before its connection closes it).
    func forget(_ socket: Int32) {
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil)
    }

    private func loop() {
        let capacity: Int32 = 64
        var events = [epoll_event](repeating: epoll_event(), count: Int(capacity))
        var ready: [CheckedContinuation<Void, any Error>] = []
        ready.reserveCapacity(Int(capacity))
        while true {
            let count = epoll_wait(epoll, &events, capacity, -1)
            guard count > 0 else {
                // EINTR; anything else (which a valid epoll descriptor does not give) must not
                // become a loop that spins.
                if count < 0 && errno != EINTR { usleep(10_000) }
                continue
            }
            waiting.withLock { waiting in
                for index in 0..<Int(count) {
                    if let waiter = waiting.removeValue(forKey: events[index].data.fd) { ready.append(waiter) }
                }
            }
            for waiter in ready { waiter.resume() }
            ready.removeAll(keepingCapacity: true)
        }
    }
}
