/// A rate limit as a pure value: `burst` requests at once, refilled at `rate` a second.
public struct TokenBucket: Sendable, Equatable {
    public let rate: Double
    public let burst: Double
    private(set) var tokens: Double
    private(set) var updatedAt: ContinuousClock.Instant

    public init(rate: Double, burst: Double, now: ContinuousClock.Instant) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updatedAt = now
    }

    /// Takes one request's token: nil when it may go now, or how long until it could.
    public mutating func take(at now: ContinuousClock.Instant) -> Duration? {
        let elapsed = max(0, (now - updatedAt).timeInterval)
        tokens = min(burst, tokens + elapsed * rate)
        updatedAt = max(updatedAt, now)
        guard tokens < 1 else {
            tokens -= 1
            return nil
        }
        return .milliseconds(Int64(((1 - tokens) / rate * 1_000).rounded(.up)))
    }

    /// Full again by `now`: nothing to remember.
    public func isFull(at now: ContinuousClock.Instant) -> Bool {
        tokens + max(0, (now - updatedAt).timeInterval) * rate >= burst
    }
}
