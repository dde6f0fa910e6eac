import Synchronization

/// Bounds how many requests are in flight; callers past the bound wait their turn in order
/// (back-pressure), and a cancelled waiter leaves the line.
///
/// A few slots (`reserve`) are kept for urgent callers, who also go to the head of the line:
/// a credential fetch that every waiting send needs must never queue behind those sends.
final class InFlightLimiter: Sendable {
    private struct State {
        var available: Int
        let reserve: Int
        var line = WaitingLine<CheckedContinuation<Void, any Error>>()
        var nextID = 0

        func canAdmit(urgent: Bool) -> Bool { available > (urgent ? 0 : reserve) }

        /// The next waiter that may take a slot now: urgent ones first, then in order.
        mutating func admitNext() -> CheckedContinuation<Void, any Error>? {
            guard let next = line.next(urgent: canAdmit(urgent: true), normal: canAdmit(urgent: false)) else { return nil }
            available -= 1
            return next
        }
    }
    private let state: Mutex<State>

    /// - Parameter reserve: slots only urgent callers may take (at most `limit - 1`).
    init(limit: Int, reserve: Int = 0) {
        let limit = max(1, limit)
        state = Mutex(State(available: limit, reserve: min(max(0, reserve), limit - 1)))
    }

    /// How many callers wait for a slot.
    var waiting: Int { state.withLock { $0.line.count } }

    func acquire(urgent: Bool = false) async throws {
        let id = state.withLock { state -> Int? in
            if state.canAdmit(urgent: urgent), urgent || state.line.isEmpty {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.line.append(continuation, id: id, urgent: urgent)
                    if let next = state.admitNext() { next.resume() }
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.line.remove(id: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.available += 1
            return state.admitNext()
        }
        next?.resume()
    }
}
