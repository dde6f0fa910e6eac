import HeraldLoops
import Testing

@Suite struct FailureStreakTests {
    let start = ContinuousClock.now

    @Test func theFirstFailureIsToldThenOneSummaryAMinute() {
        var streak = FailureStreak(summaryEvery: .seconds(60))
        #expect(streak.failed(at: start) == .first)
        // A failure every 100 ms for two minutes: two summaries, nothing else.
        var reports: [FailureStreak.Report] = []
        for tenth in 1...1_200 {
            if let report = streak.failed(at: start + .milliseconds(100 * tenth)) { reports.append(report) }
        }
        #expect(reports == [.still(failures: 601, since: start), .still(failures: 1_201, since: start)])
        #expect(streak.failures == 1_201)
    }

    @Test func aSuccessEndsTheStreakOnceAndTheNextFailureIsFirstAgain() {
        var streak = FailureStreak()
        _ = streak.failed(at: start)
        _ = streak.failed(at: start + .seconds(1))
        let ended = streak.succeeded(at: start + .seconds(3))
        #expect(ended?.failures == 2)
        #expect(ended?.lasted == .seconds(3))
        #expect(streak.failures == 0)
        #expect(streak.succeeded(at: start + .seconds(4)) == nil)
        #expect(streak.failed(at: start + .seconds(5)) == .first)
    }

    @Test func thePauseDoublesFrom200MillisecondsToTwoSeconds() {
        #expect(RetryPause.after(failures: 1) == .milliseconds(200))
        #expect(RetryPause.after(failures: 2) == .milliseconds(400))
        #expect(RetryPause.after(failures: 4) == .milliseconds(1_600))
        #expect(RetryPause.after(failures: 5) == .seconds(2))
        #expect(RetryPause.after(failures: 1_000_000) == .seconds(2))
    }
}
