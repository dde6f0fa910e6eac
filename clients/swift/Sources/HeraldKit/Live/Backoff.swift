/// Exponential backoff with full jitter: the `attempt`-th retry (0 first) waits a uniformly
/// random time between 0 and `min(cap, base · 2^attempt)`, so that a server's clients, all
/// cut off at once, do not come back at once.
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .milliseconds(500), cap: Duration = .seconds(30)) {
        self.base = base
        self.cap = cap
    }

    /// The longest the `attempt`-th retry may wait.
    public func ceiling(attempt: Int) -> Duration {
        let factor = 1 << min(max(attempt, 0), 30)
        let grown = base * factor
        return grown > cap ? cap : grown
    }

    /// The wait of the `attempt`-th retry, for `jitter` in 0..<1 (a random number).
    public func delay(attempt: Int, jitter: Double) -> Duration {
        ceiling(attempt: attempt) * min(max(jitter, 0), 1)
    }
}
