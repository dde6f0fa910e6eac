import Foundation

/// Reads APNs answers: HTTP status plus `{"reason": "…"}` (Apple's "Handling notification
/// responses from APNs").
public enum APNsClassifier {
    static let deadTokenReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered", "ExpiredToken"]
    static let configurationReasons: Set<String> = [
        "BadCertificate", "BadCertificateEnvironment", "Forbidden", "InvalidProviderToken", "MissingProviderToken",
        "BadTopic", "TopicDisallowed", "MissingTopic", "BadPath"
    ]

    public static func classify(_ response: ProviderResponse, now: Date = Date()) -> DeliveryOutcome {
        if response.status == 200 { return .delivered(messageID: response.headers["apns-id"]) }
        let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
        let reason = body?["reason"] as? String ?? "HTTP \(response.status)"
        let retryAfter = RetryAfter.parse(response.headers["retry-after"], now: now)

        if response.status == 410 || deadTokenReasons.contains(reason) { return .deadToken(reason: reason) }
        if reason == "ExpiredProviderToken" { return .credentialsExpired(reason: reason) }
        if configurationReasons.contains(reason) { return .configurationError(reason: reason) }
        switch response.status {
        case 429, 500...599: return .retry(after: retryAfter, reason: reason)
        case 403: return .configurationError(reason: reason)
        default: return .badRequest(reason: reason)
        }
    }
}
