import Foundation
import HeraldCore
import HeraldPush
import HeraldStore

/// What becomes of a sent delivery once the provider answered: the pure decision between
/// the answer and the acknowledgement (docs/architecture.md), unit-tested without a database.
struct Settlement: Equatable {
    let status: Acknowledgement.Status
    let outcome: Acknowledgement.Outcome
    /// When it is due again (status `queued`).
    var next: Date?
    var messageID: String?
    var error: String?
    /// Whether the attempt counts towards the delivery's attempts.
    var spent = true

    /// How an answer counts for the provider's `SendGate`: no HTTP answer at all is a
    /// transport fault; refused credentials are a configuration fault; anything else (even
    /// a 503) means the endpoint answered. A channel whose devices each name their own
    /// endpoint (`ChannelGate.perDevice`) has no one endpoint to hold back: one that does not
    /// answer holds back only its own deliveries (retried by backoff), never every device's.
    static func gateAnswer(for outcome: DeliveryOutcome, http: Int?, gate: ChannelGate) -> SendGate.Answer {
        switch outcome {
        case .retry(_, let reason) where http == nil && gate == .oneEndpoint: .transportFault(reason)
        case .unanswered(let reason) where gate == .oneEndpoint: .transportFault(reason)
        case .credentialsExpired(let reason), .configurationError(let reason): .configurationFault(reason)
        default: .answered
        }
    }

    /// - Parameters:
    ///   - heldBack: whether the gate holds the provider back now that it took in this answer.
    ///   - attempt: the attempt this was (counted ones, this one included).
    ///   - unansweredBefore: the delivery's earlier sends that left and were never answered.
    static func of<Random: RandomNumberGenerator>(
        _ outcome: DeliveryOutcome, http: Int?, heldBack: Bool, attempt: Int, firstAttempt: Date, now: Date, retry: RetryPolicy,
        unansweredBefore: Int = 0, random: inout Random
    ) -> Settlement {
        switch outcome {
        case .unanswered(let reason) where unansweredBefore >= 1:
            // The provider may hold either send: a third could only repeat it.
            return Settlement(status: .unanswered, outcome: .unanswered, error: "\(reason); sent twice, never answered: not sent again")
        case .unanswered(let reason) where heldBack:
            return Settlement(
                status: .queued, outcome: .unanswered, next: now, error: "\(reason) (the endpoint is held back; not counted)", spent: false)
        case .unanswered(let reason):
            // Sent again once, by the usual backoff.
            switch retry.decide(attempts: attempt, firstAttempt: firstAttempt, now: now, retryAfter: nil, random: &random) {
            case .retry(let at): return Settlement(status: .queued, outcome: .unanswered, next: at, error: "\(reason); sent again once")
            case .expire: return Settlement(status: .expired, outcome: .unanswered, error: "\(reason); the delivery deadline has passed")
            }
        case .delivered(let messageID):
            return Settlement(status: .sent, outcome: .delivered, messageID: messageID)
        case .retry(_, let reason) where http == nil && heldBack:
            // The endpoint does not answer at all: the delivery waits for it, queued,
            // without spending an attempt (due at once when the circuit closes).
            return Settlement(
                status: .queued, outcome: .retry, next: now, error: "\(reason) (the endpoint is held back; not counted)", spent: false)
        case .retry(let after, let reason):
            switch retry.decide(attempts: attempt, firstAttempt: firstAttempt, now: now, retryAfter: after, random: &random) {
            case .retry(let at): return Settlement(status: .queued, outcome: .retry, next: at, error: reason)
            case .expire: return Settlement(status: .expired, outcome: .retry, error: "\(reason); the delivery deadline has passed")
            }
        case .deadToken(let reason):
            return Settlement(status: .deadToken, outcome: .deadToken, error: reason)
        case .badRequest(let reason):
            return Settlement(status: .failed, outcome: .badRequest, error: reason)
        case .credentialsExpired(let reason), .configurationError(let reason):
            // This worker's configuration failed, not the delivery: not counted, and due at
            // once for a worker configured right (this one does not claim it while paused).
            return Settlement(status: .queued, outcome: .configurationError, next: now, error: reason, spent: false)
        }
    }
}
