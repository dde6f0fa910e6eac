import Foundation
import HeraldCore
import Testing

/// A seeded generator so the jitter is repeatable (SplitMix64).
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RetryPolicyTests {
    let start = Date(timeIntervalSince1970: 1_795_303_800)

    func wait(_ decision: RetryPolicy.Decision, from now: Date) -> TimeInterval? {
        if case .retry(let at) = decision { return at.timeIntervalSince(now) }
        return nil
    }

    @Test func waitsAreJitteredBelowADoublingCeiling() throws {
        let policy = RetryPolicy(base: .seconds(1), cap: .seconds(600))
        var random = SeededRandom(state: 42)
        for attempt in 1...12 {
            let ceiling = min(600, pow(2, Double(attempt - 1)))
            var waits: [TimeInterval] = []
            for _ in 0..<200 {
                let decision = policy.decide(attempts: attempt, firstAttempt: start, now: start, retryAfter: nil, random: &random)
                waits.append(try #require(wait(decision, from: start)))
            }
            #expect(waits.allSatisfy { $0 >= 0 && $0 <= ceiling }, "attempt \(attempt)")
            // Full jitter spreads over the whole range, not just near the ceiling.
            #expect((waits.min() ?? ceiling) < ceiling * 0.2 && (waits.max() ?? 0) > ceiling * 0.8, "attempt \(attempt)")
        }
    }

    @Test func retryAfterIsNeverCutShort() throws {
        let policy = RetryPolicy()
        var random = SeededRandom(state: 7)
        for attempt in 1...5 {
            let decision = policy.decide(attempts: attempt, firstAttempt: start, now: start, retryAfter: .seconds(30), random: &random)
            #expect(try #require(wait(decision, from: start)) >= 30)
        }
    }

    @Test func theDeadlineEndsRetries() {
        let policy = RetryPolicy(deadline: .seconds(3600))
        var random = SeededRandom(state: 1)
        let late = start.addingTimeInterval(3599)
        #expect(policy.decide(attempts: 3, firstAttempt: start, now: late, retryAfter: .seconds(120), random: &random) == .expire)
        #expect(policy.decide(attempts: 3, firstAttempt: start, now: start.addingTimeInterval(3601), retryAfter: nil, random: &random) == .expire)
        if case .expire = policy.decide(attempts: 1, firstAttempt: start, now: start, retryAfter: nil, random: &random) {
            Issue.record("an early failure must be retried")
        }
    }

    @Test func hugeAttemptCountsStayAtTheCap() throws {
        let policy = RetryPolicy(cap: .seconds(60))
        var random = SeededRandom(state: 9)
        let decision = policy.decide(attempts: 10_000, firstAttempt: start, now: start, retryAfter: nil, random: &random)
        #expect(try #require(wait(decision, from: start)) <= 60)
    }
}
