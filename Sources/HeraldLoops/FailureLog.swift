import Logging
import Synchronization

/// One loop's failures, told without flooding the log: the first of a streak at `level`, then
/// one summary a minute with the count while it lasts, and one line when the loop works again.
/// A loop whose database is away logs three lines an hour, not one a turn.
public final class FailureLog: Sendable {
    private let logger: Logger
    private let what: String
    private let level: Logger.Level
    private let streak: Mutex<FailureStreak>

    /// - Parameters:
    ///   - what: the loop's work, as its lines name it (`"live upkeep"`: "live upkeep failed;
    ///     retrying", "live upkeep still failing", "live upkeep works again").
    ///   - level: the level of the failure's lines (the recovery's is `notice`).
    public init(_ what: String, logger: Logger, level: Logger.Level = .warning, summaryEvery: Duration = .seconds(60)) {
        self.logger = logger
        self.what = what
        self.level = level
        self.streak = Mutex(FailureStreak(summaryEvery: summaryEvery))
    }

    /// Failures in a row now.
    public var failures: Int { streak.withLock { $0.failures } }

    /// A turn failed with `error`. - Returns: failures in a row, this one included (for
    /// `RetryPause.after(failures:)`).
    @discardableResult
    public func failed(_ error: any Error, metadata: Logger.Metadata = [:]) -> Int {
        let (report, failures) = streak.withLock { streak in (streak.failed(at: .now), streak.failures) }
        var metadata = metadata
        metadata["error"] = "\(error)"
        switch report {
        case .first?:
            logger.log(level: level, "\(what) failed; retrying", metadata: metadata)
        case .still(let count, let since)?:
            metadata["failures"] = "\(count)"
            metadata["since"] = "\(seconds(since.duration(to: .now)))s ago"
            logger.log(level: level, "\(what) still failing", metadata: metadata)
        case nil:
            break
        }
        return failures
    }

    /// A turn succeeded: the end of a streak, if there was one, is told once.
    public func succeeded() {
        guard let ended = streak.withLock({ $0.succeeded(at: .now) }) else { return }
        logger.notice(
            "\(what) works again", metadata: ["failures": "\(ended.failures)", "lasted": "\(seconds(ended.lasted))s"])
    }

    private func seconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds)
    }

    /// One turn of a loop: `body` runs; a success ends a streak, a failure is told and followed
    /// by `RetryPause` before the loop's next turn. A turn cut short by the task's cancellation
    /// is no failure: the loop ends. - Returns: whether the loop goes on.
    public func attempt(_ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            succeeded()
            return !Task.isCancelled
        } catch {
            if Task.isCancelled { return false }
            return await RetryPause.wait(afterFailures: failed(error))
        }
    }

    /// A turn (`attempt`) for each of `wakes`, until they end or the task is cancelled.
    public func forEach(_ wakes: AsyncStream<Void>, _ body: () async throws -> Void) async {
        for await _ in wakes {
            guard await attempt(body) else { return }
        }
    }
}
