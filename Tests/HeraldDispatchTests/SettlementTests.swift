import Foundation
import HeraldCore
import HeraldLoops
import HeraldPush
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// The answer → acknowledgement decision, without a database or a network.
struct SettlementTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let policy = RetryPolicy(base: .seconds(1), cap: .seconds(60), deadline: .seconds(3_600))

    func settle(
        _ outcome: DeliveryOutcome, http: Int?, heldBack: Bool = false, attempt: Int = 1, firstAttempt: Date? = nil, unansweredBefore: Int = 0
    ) -> Settlement {
        var random = SystemRandomNumberGenerator()
        return Settlement.of(
            outcome, http: http, heldBack: heldBack, attempt: attempt, firstAttempt: firstAttempt ?? now, now: now, retry: policy,
            unansweredBefore: unansweredBefore, random: &random)
    }

    /// A send that left and was never answered may have been taken: sent again once, by
    /// backoff, then recorded as unanswered and never sent a third time — held back or not.
    @Test func anUnansweredSendIsRepeatedOnceAtMost() throws {
        let first = settle(.unanswered(reason: "no answer"), http: nil)
        #expect(first.status == .queued && first.outcome == .unanswered && first.spent && first.next != nil)
        let heldBack = settle(.unanswered(reason: "no answer"), http: nil, heldBack: true)
        #expect(heldBack.status == .queued && heldBack.outcome == .unanswered && !heldBack.spent)
        for held in [false, true] {
            let second = settle(.unanswered(reason: "no answer"), http: nil, heldBack: held, attempt: 2, unansweredBefore: 1)
            #expect(second.status == .unanswered && second.outcome == .unanswered && second.next == nil)
            #expect(second.error == "no answer; sent twice, never answered: not sent again")
        }
        // A send that never left (no connection) is retried as before, whatever came earlier.
        let unsent = settle(.retry(after: nil, reason: "cannot connect"), http: nil, attempt: 3, unansweredBefore: 1)
        #expect(unsent.status == .queued && unsent.outcome == .retry)
        // Past the deadline it expires like any retry.
        let late = settle(.unanswered(reason: "no answer"), http: nil, attempt: 9, firstAttempt: now.addingTimeInterval(-7_200))
        #expect(late.status == .expired)
        #expect(Settlement.gateAnswer(for: .unanswered(reason: "x"), http: nil, gate: .oneEndpoint) == .transportFault("x"))
        #expect(Settlement.gateAnswer(for: .unanswered(reason: "x"), http: nil, gate: .perDevice) == .answered)
    }

    @Test func deliveredIsSentWithTheProvidersId() {
        #expect(settle(.delivered(messageID: "m-1"), http: 200) == Settlement(status: .sent, outcome: .delivered, messageID: "m-1"))
    }

    @Test func aDeadTokenAndABadRequestAreFinal() {
        #expect(settle(.deadToken(reason: "Unregistered"), http: 410) == Settlement(status: .deadToken, outcome: .deadToken, error: "Unregistered"))
        #expect(settle(.badRequest(reason: "bad field"), http: 400) == Settlement(status: .failed, outcome: .badRequest, error: "bad field"))
    }

    /// A retry is due by backoff, never before the provider's Retry-After, and counted.
    @Test func aRetryWaitsForRetryAfterAndCounts() throws {
        let settled = settle(.retry(after: .seconds(30), reason: "503"), http: 503, heldBack: true)
        #expect(settled.status == .queued && settled.outcome == .retry && settled.spent)
        let next = try #require(settled.next)
        #expect(next >= now.addingTimeInterval(30))
    }

    @Test func aRetryPastTheDeadlineExpires() {
        let settled = settle(.retry(after: nil, reason: "timeout"), http: 500, attempt: 9, firstAttempt: now.addingTimeInterval(-7_200))
        #expect(settled.status == .expired && settled.outcome == .retry && settled.next == nil)
    }

    /// No answer while the endpoint is held back: queued at once, not counted.
    @Test func noAnswerFromAHeldBackEndpointIsNotCounted() {
        let settled = settle(.retry(after: nil, reason: "Couldn't connect"), http: nil, heldBack: true)
        #expect(
            settled
                == Settlement(
                    status: .queued, outcome: .retry, next: now, error: "Couldn't connect (the endpoint is held back; not counted)", spent: false))
        // Before the circuit opens, the same is an ordinary, counted retry.
        let counted = settle(.retry(after: nil, reason: "Couldn't connect"), http: nil, heldBack: false)
        #expect(counted.spent && counted.next.map { $0 > now } == true)
    }

    @Test func aConfigurationErrorIsDueAtOnceAndNotCounted() {
        for outcome in [DeliveryOutcome.configurationError(reason: "no key"), .credentialsExpired(reason: "revoked")] {
            let settled = settle(outcome, http: nil)
            #expect(settled.status == .queued && settled.outcome == .configurationError && settled.next == now && !settled.spent)
        }
    }

    @Test func whatTheGateHears() {
        #expect(Settlement.gateAnswer(for: .retry(after: nil, reason: "refused"), http: nil, gate: .oneEndpoint) == .transportFault("refused"))
        #expect(Settlement.gateAnswer(for: .retry(after: nil, reason: "503"), http: 503, gate: .oneEndpoint) == .answered)
        #expect(Settlement.gateAnswer(for: .configurationError(reason: "no key"), http: nil, gate: .oneEndpoint) == .configurationFault("no key"))
        #expect(Settlement.gateAnswer(for: .credentialsExpired(reason: "401"), http: 401, gate: .oneEndpoint) == .configurationFault("401"))
        #expect(Settlement.gateAnswer(for: .delivered(messageID: nil), http: 200, gate: .oneEndpoint) == .answered)
        #expect(Settlement.gateAnswer(for: .deadToken(reason: "gone"), http: 404, gate: .oneEndpoint) == .answered)
        // Each browser names its own push service: one that does not answer holds back none but its own.
        #expect(Settlement.gateAnswer(for: .retry(after: nil, reason: "refused"), http: nil, gate: .perDevice) == .answered)
        #expect(Settlement.gateAnswer(for: .configurationError(reason: "no key"), http: nil, gate: .perDevice) == .configurationFault("no key"))
    }

    @Test func loopsBackOffUpToTwoSeconds() {
        #expect(
            (0...8).map { RetryPause.after(failures: $0) }
                == [
                    .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1_600),
                    .milliseconds(2_000), .milliseconds(2_000), .milliseconds(2_000), .milliseconds(2_000)
                ])
    }
}
