import Synchronization

/// A wake-up call between tasks: `signal()` wakes every waiter, or the next one to wait if
/// nobody is waiting yet (a signal is never lost, and several coalesce into one).
final class Signal: Sendable {
    private struct State {
        var pending = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waits that timed out or were cancelled before their continuation was stored.
        var abandoned: Set<Int> = []
    }

    private let state = Mutex(State())

    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.waiters.isEmpty {
                state.pending = true
                return []
            }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes a pending signal without waiting.
    func consume() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }

    /// Returns when signalled, at `deadline`, or when the task is cancelled.
    func wait(until deadline: ContinuousClock.Instant) async {
        await wait(timeout: max(.zero, ContinuousClock.now.duration(to: deadline)))
    }

    /// Returns when signalled, after `timeout`, or when the task is cancelled.
    func wait(timeout: Duration) async {
        if consume() || Task.isCancelled { return }
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.abandon(id)
            }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let resumeNow = self.state.withLock { state -> Bool in
                            if state.pending || state.abandoned.contains(id) {
                                state.pending = false
                                state.abandoned.remove(id)
                                return true
                            }
                            state.waiters[id] = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    self.abandon(id)
                }
            }
            await group.next()
            group.cancelAll()
        }
        state.withLock { _ = $0.abandoned.remove(id) }
    }

    private func abandon(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            state.abandoned.insert(id)
            return nil
        }
        waiter?.resume()
    }
}
