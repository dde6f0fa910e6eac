import Synchronization

/// Whether `task` finishes within `limit`: true as soon as it does. A task that never ends
/// (a loop that ignores its cancellation) fails the test after `limit` instead of hanging it.
public func finishes<Success: Sendable, Failure: Error>(_ task: Task<Success, Failure>, within limit: Duration) async -> Bool {
    let done = Atomic<Bool>(false)
    let watcher = Task {
        _ = await task.result
        done.store(true, ordering: .relaxed)
    }
    let deadline = ContinuousClock.now + limit
    while !done.load(ordering: .relaxed), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
    if !done.load(ordering: .relaxed) { watcher.cancel() }
    return done.load(ordering: .relaxed)
}

/// Waits until `condition` holds, for at most `limit`. - Returns: whether it held.
public func eventually(within limit: Duration = .seconds(300), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
