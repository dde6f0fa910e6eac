import Foundation
import Synchronization

/// One dedicated OS thread that runs blocking jobs in order, so blocking libpq calls never
/// occupy Swift's cooperative thread pool. Callers `await run { … }` from any task.
final class BlockingThread: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)

    init(name: String) {
        Thread.start(named: name) { [self] in self.loop() }
    }

    /// Runs `body` on the thread and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = enqueue {
                continuation.resume(with: Swift.Result { try body() })
            }
            if !accepted {
                continuation.resume(throwing: PostgresError(kind: .connection, message: "connection is closed"))
            }
        }
    }

    /// Lets the thread finish the jobs it has and then end.
    func stop() {
        state.withLock { $0.stopping = true }
        signal.signal()
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { signal.signal() }
        return accepted
    }

    private func loop() {
        while true {
            signal.wait()
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job() }
            if stopping && state.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
