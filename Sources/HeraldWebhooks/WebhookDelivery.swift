import Foundation
import HeraldCore
import HeraldHTTP
import HeraldStore

/// One attempt at one message, as a request and what became of it (docs/webhooks.md): the
/// Standard Webhooks headers, the destination policy asked before the request and again for
/// every address it connects to, 10 s for the whole exchange, the first 1 KiB of the answer
/// kept, and the retry schedule's decision.
public enum WebhookDelivery {
    /// The whole exchange's limit: a 2xx later than this does not deliver.
    public static let timeout: Duration = .seconds(10)
    /// How much of an answer is read and kept.
    public static let maxResponseBytes = 1_024

    /// `webhook-id`: `msg_` and the message id's hex.
    public static func webhookID(_ id: UUID) -> String {
        "msg_" + id.lowercasedString.replacingOccurrences(of: "-", with: "")
    }

    /// The signed request for `message`, sent at `now`.
    /// - Throws: `InputError` when the policy refuses its URL now (it may have changed since
    ///   the endpoint was registered).
    public static func request(for message: ClaimedWebhookMessage, policy: DestinationPolicy, now: Date) throws -> HTTPRequest {
        _ = try policy.url(message.target.url)
        let body = Array(message.body.utf8)
        // A stored secret that no longer reads signs nothing: the receiver refuses the request.
        let secrets = [message.target.secret, message.target.previousSecret].compactMap { $0 }.compactMap { try? WebhookSecret($0) }
        let signature = WebhookSignature.headers(id: webhookID(message.id), timestamp: Int64(now.timeIntervalSince1970), body: body, secrets: secrets)
        var request = HTTPRequest(
            method: "POST", url: message.target.url,
            headers: [("content-type", "application/json"), ("user-agent", "Herald-Webhooks/1")] + signature, body: body, timeout: timeout)
        request.connectGuard = policy.connectGuard
        request.maxResponseBytes = maxResponseBytes
        return request
    }

    /// The record of an attempt that got `answer` (or failed with `failure`), and what follows.
    public static func result(
        of message: ClaimedWebhookMessage, answer: HTTPResponse?, failure: String?, startedAt: Date, finishedAt: Date
    ) -> WebhookAttemptResult {
        let decision = WebhookRetrySchedule.decide(
            attempt: message.attempt, answer.map { .status($0.status) } ?? .noAnswer(failure ?? "no answer"))
        let outcome: WebhookAttemptResult.Outcome =
            switch decision {
            case .delivered: .delivered
            case .retry(let wait): .retry(at: finishedAt.addingTimeInterval(wait.timeInterval))
            case .disable(let reason): .disable(reason: reason)
            }
        let response = answer.map { String(decoding: $0.body.prefix(maxResponseBytes), as: UTF8.self) }
        return WebhookAttemptResult(
            message: message, outcome: outcome, httpStatus: answer?.status, error: answer == nil ? failure ?? "no answer" : nil,
            response: response?.isEmpty == true ? nil : response,
            durationMs: max(0, Int((finishedAt.timeIntervalSince(startedAt) * 1000).rounded())), at: finishedAt)
    }
}
