import Foundation

/// Reads a push service's answer (RFC 8030 §5 and §8.3, RFC 8292 §4.2; docs/apps.md#web-push-browsers-and-installed-web-apps).
public enum WebPushClassifier {
    public static func classify(_ response: ProviderResponse, now: Date = Date()) -> DeliveryOutcome {
        let said = String(decoding: response.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = "HTTP \(response.status)" + (said.isEmpty ? "" : ": " + said.filter { !$0.isNewline })
        switch response.status {
        case 200..<300:
            // 201 with the push message's URL; its last part is the service's id for it.
            return .delivered(messageID: response.headers["location"].flatMap { $0.split(separator: "/").last.map(String.init) })
        case 404, 410:
            return .deadToken(reason: "the push service no longer knows the subscription (\(reason)): the browser unsubscribed or it expired")
        case 429, 503:
            return .retry(after: RetryAfter.parse(response.headers["retry-after"], now: now), reason: reason)
        case 413:
            return .badRequest(reason: "the push service refused the push as too large (\(reason)); a defect: the body is kept under 4,096 bytes")
        case 401:
            // The VAPID token: signed anew once; refused again, it is the key or subject.
            return .credentialsExpired(reason: reason)
        case 403:
            // Another application server key than the one the page subscribed with (a key
            // rotated since): this subscription, not the configuration.
            return .badRequest(
                reason:
                    "the push service refused this server's VAPID key for the subscription (\(reason)); the page must subscribe again with GET /v1/webpush/key"
            )
        case 500...599:
            return .retry(after: RetryAfter.parse(response.headers["retry-after"], now: now), reason: reason)
        default:
            return .badRequest(reason: reason)
        }
    }
}
