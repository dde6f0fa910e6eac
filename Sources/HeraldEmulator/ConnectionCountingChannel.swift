import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// Counts the TCP connections a server accepts and keeps them at hand (see
/// `ConnectionCounter.closeAll`), then hands each to the real channel setup, and serves each
/// on the emulator's own threads (`EmulatorExecutor`), with every stream's task under it.
///
/// Only the connections: the service groups above them (swift-service-lifecycle, and
/// Hummingbird's date cache) wait on swift-async-algorithms' `merge`, which holds its lock
/// while it suspends, and a task with an executor preference takes its own status lock when
/// it suspends. A listener stopping (a port in use) cancelled such a task while it held the
/// merge's lock: each thread held the lock the other waited for, and `herald emulator`
/// never exited (20 of 80 runs with both cores busy; none of 80 since).
struct ConnectionCountingChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let counter: ConnectionCounter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        counter.opened(channel)
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EmulatorExecutor.shared) {
            await base.handle(value: value, logger: logger)
        }
    }
}

/// The connections the emulator accepted: how many since it started, and the ones still open.
final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let open = Mutex<[ObjectIdentifier: any Channel]>([:])

    func opened(_ channel: any Channel) {
        count.add(1, ordering: .relaxed)
        let id = ObjectIdentifier(channel)
        open.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in self?.open.withLock { _ = $0.removeValue(forKey: id) } }
    }

    var value: Int { count.load(ordering: .relaxed) }

    /// Closes every connection still open: a client's idle HTTP/2 connection has nothing to
    /// finish, and a graceful shutdown would wait on it until its last resort (cancelling the
    /// server, whose connections then completed on event loops already shut down).
    func closeAll() {
        for channel in open.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }

    /// Returns once no connection is open, or after `limit`.
    /// - Returns: whether none is open.
    @discardableResult
    func waitUntilAllClosed(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while open.withLock({ !$0.isEmpty }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return open.withLock { $0.isEmpty }
    }
}
