import Synchronization

/// How many tests work on a throwaway database at once (`TestDatabase.with`). Swift Testing
/// starts every test of the suite together: each database test lends a pool, and many start
/// workers, servers and `herald` processes with pools of their own, so the first seconds of a
/// run took more connections than the test server allows ("sorry, too many clients already",
/// a dozen tests failing at random). Past the limit, a test waits for a slot before its
/// database is made; a test already holding one (a database within a database) takes no other.
/// A test also gates its own bursts with one (`take`, `give`): a thousand sockets connecting at
/// once overflow a listening socket's backlog on a loaded machine, and a dropped SYN is retried
/// only after seconds.
public final class TestSlots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    public init(_ limit: Int) {
        state = Mutex(State(free: limit))
    }

    /// Runs `body` in a slot: at once when one is free, else when a test ends.
    func withSlot<Result>(_ body: () async throws -> Result) async throws -> Result {
        if Self.held { return try await body() }
        await take()
        defer { give() }
        return try await Self.$held.withValue(true) { try await body() }
    }

    @TaskLocal private static var held = false

    /// Waits for a slot and takes it.
    public func take() async {
        if state.withLock({ state in
            guard state.free > 0 else { return false }
            state.free -= 1
            return true
        }) {
            return
        }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the slot to the first one waiting, or frees it.
    public func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
