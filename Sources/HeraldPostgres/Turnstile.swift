import Synchronization

/// Lets one task at a time through, the others in the order they came: a connection's
/// calls run on their callers' tasks, and libpq's handle takes one call at a time.
final class Turnstile: Sendable {
    private struct State {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var first = 0

        /// Takes the turn if no one holds it.
        mutating func take() -> Bool {
            if taken { return false }
            taken = true
            return true
        }
    }

    private let state = Mutex(State())

    /// Waits until no one else holds the turn, and takes it.
    func enter() async {
        // Without a continuation when the turn is free, as it is for most calls.
        if state.withLock({ $0.take() }) { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.take() { return true }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the next task waiting, or frees it.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.first < state.waiting.count else {
                state.taken = false
                state.waiting.removeAll(keepingCapacity: true)
                state.first = 0
                return nil
            }
            defer { state.first += 1 }
            return state.waiting[state.first]
        }
        next?.resume()
    }
}
