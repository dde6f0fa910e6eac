/// How long a loop waits after its own work failed (a claim, a round, a connection):
/// 200 ms after the first failure, doubling, at most 2 s, so that a loop finds a newly
/// promoted primary within 2 s of its promotion and a database that stays away costs one
/// attempt every 2 s, not a spinning core.
public enum RetryPause {
    public static let longest: Duration = .seconds(2)

    public static func after(failures: Int) -> Duration {
        .milliseconds(min(2_000, 100 * (1 << min(max(failures, 0), 5))))
    }

    /// Sleeps `after(failures:)`. - Returns: false when the task was cancelled (the loop ends).
    public static func wait(afterFailures failures: Int) async -> Bool {
        do {
            try await Task.sleep(for: after(failures: failures))
            return true
        } catch {
            return false
        }
    }
}
