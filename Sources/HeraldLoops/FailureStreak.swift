/// Failures of one loop in a row, and when to say so: the first failure of a streak is
/// reported, then at most one summary every `summaryEvery` (with the count), and the end of
/// the streak once. A pure value: the caller passes the time in.
public struct FailureStreak: Sendable {
    /// What to tell about a failure.
    public enum Report: Sendable, Equatable {
        /// The first failure after a success (or ever).
        case first
        /// Still failing: `failures` in a row since `since`.
        case still(failures: Int, since: ContinuousClock.Instant)
    }

    /// Failures in a row (0 after a success).
    public private(set) var failures = 0
    /// How often a streak is summarised while it lasts.
    public let summaryEvery: Duration
    private var began: ContinuousClock.Instant?
    private var lastReport: ContinuousClock.Instant?

    public init(summaryEvery: Duration = .seconds(60)) {
        self.summaryEvery = summaryEvery
    }

    /// A turn failed. - Returns: what to report, or nil to stay quiet.
    public mutating func failed(at now: ContinuousClock.Instant) -> Report? {
        failures += 1
        guard let began, let lastReport else {
            self.began = now
            self.lastReport = now
            return .first
        }
        guard lastReport.duration(to: now) >= summaryEvery else { return nil }
        self.lastReport = now
        return .still(failures: failures, since: began)
    }

    /// A turn succeeded. - Returns: the streak it ended (its failures and how long it lasted),
    /// or nil when there was none.
    public mutating func succeeded(at now: ContinuousClock.Instant) -> (failures: Int, lasted: Duration)? {
        defer {
            failures = 0
            began = nil
            lastReport = nil
        }
        guard failures > 0, let began else { return nil }
        return (failures, began.duration(to: now))
    }
}
