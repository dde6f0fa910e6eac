/// What becomes of a webhook delivery after an attempt (docs/webhooks.md): a 2xx answer within the
/// time limit delivers it; `410 Gone` disables the endpoint at once; anything else (another
/// status, no answer in time, no connection) is tried again after 5 s, 5 min, 30 min, 2 h,
/// 5 h, 10 h and 10 h, and after the last of those the endpoint is disabled. Pure: the
/// delivery loop asks it, and tests pin the schedule.
public enum WebhookRetrySchedule {
    /// The waits before the second attempt, the third, …, the eighth.
    public static let waits: [Duration] = [
        .seconds(5), .seconds(5 * 60), .seconds(30 * 60), .seconds(2 * 3600), .seconds(5 * 3600), .seconds(10 * 3600), .seconds(10 * 3600)
    ]
    /// The first attempt and every retry.
    public static var attempts: Int { waits.count + 1 }

    /// How an attempt ended.
    public enum Answer: Sendable, Equatable {
        /// The endpoint answered with this HTTP status.
        case status(Int)
        /// No answer: refused, unreachable, timed out, or a TLS failure (said in words).
        case noAnswer(String)
    }

    public enum Decision: Sendable, Equatable {
        case delivered
        /// Tried again after this long.
        case retry(after: Duration)
        /// The endpoint is disabled, for this reason, and its queued deliveries wait for it to
        /// be enabled again.
        case disable(reason: String)
    }

    /// The decision after attempt number `attempt` (1 for the first) answered `answer`.
    public static func decide(attempt: Int, _ answer: Answer) -> Decision {
        switch answer {
        case .status(let status) where (200...299).contains(status): return .delivered
        case .status(410): return .disable(reason: "the endpoint answered 410 Gone")
        default:
            guard attempt >= 1, attempt <= waits.count else {
                let last: String =
                    switch answer {
                    case .status(let status): "HTTP \(status)"
                    case .noAnswer(let reason): reason
                    }
                return .disable(reason: "\(attempts) attempts failed over \(totalHours) hours; the last: \(last)")
            }
            return .retry(after: waits[attempt - 1])
        }
    }

    /// How long the schedule lasts, in hours (rounded down).
    static var totalHours: Int { Int(waits.reduce(Duration.zero, +).components.seconds / 3600) }
}
