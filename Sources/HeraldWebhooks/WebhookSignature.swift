import Crypto
import Foundation

/// The Standard Webhooks signature of one request (docs/webhooks.md): the headers `webhook-id`,
/// `webhook-timestamp` and `webhook-signature`, where a signature is `v1,` and the base64 of the
/// HMAC-SHA256 of `id.timestamp.body` under the secret's key, and several (the current secret's
/// and, for 24 hours after a rotation, the previous one's) are separated by spaces.
public enum WebhookSignature {
    /// One `v1,…` signature.
    public static func sign(id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret.key))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The three headers of a request, signed with each of `secrets` (the newest first).
    public static func headers(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) -> [(name: String, value: String)] {
        [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", secrets.map { sign(id: id, timestamp: timestamp, body: body, secret: $0) }.joined(separator: " "))
        ]
    }
}
