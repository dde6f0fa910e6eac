import Foundation

/// When to try a delivery again: exponential backoff with full jitter and a cap, never
/// sooner than the provider's `Retry-After`, and never past the delivery's deadline
/// (docs/notifications.md). A pure function of its inputs and a random source.
public struct RetryPolicy: Sendable, Equatable {
    /// The first backoff's ceiling; each later attempt doubles it.
    public var base: Duration
    /// The most any single wait may be (before `Retry-After`).
    public var cap: Duration
    /// How long after the first attempt a delivery may still be tried.
    public var deadline: Duration

    public init(base: Duration = .seconds(1), cap: Duration = .seconds(600), deadline: Duration = .seconds(24 * 3600)) {
        self.base = base
        self.cap = cap
        self.deadline = deadline
    }

    public enum Decision: Sendable, Equatable {
        /// Try again at this time.
        case retry(at: Date)
        /// The deadline has passed (or would before the next try): stop, as `expired`.
        case expire
    }

    /// - Parameters:
    ///   - attempts: attempts made so far (1 after the first failure).
    ///   - firstAttempt: when the delivery was first tried.
    ///   - retryAfter: what the provider asked for, if anything.
    public func decide<Random: RandomNumberGenerator>(
        attempts: Int, firstAttempt: Date, now: Date, retryAfter: Duration?, random: inout Random
    ) -> Decision {
        let ceiling = min(cap.timeInterval, base.timeInterval * pow(2, Double(min(max(attempts - 1, 0), 60))))
        var wait = ceiling > 0 ? Double.random(in: 0...ceiling, using: &random) : 0
        if let retryAfter { wait = max(wait, retryAfter.timeInterval) }
        let next = now.addingTimeInterval(wait)
        let end = firstAttempt.addingTimeInterval(deadline.timeInterval)
        return next > end ? .expire : .retry(at: next)
    }

}

extension Duration {
    /// The duration in seconds, fractions included (for `Date` arithmetic and SQL intervals).
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
