import Foundation
import HeraldCore

/// One Web Push message before encryption (docs/apps.md#web-push-browsers-and-installed-web-apps): a Declarative Web Push
/// body, which Safari 18.4+ shows by itself and a service worker reads as JSON, and the
/// RFC 8030 headers.
///
/// ```json
/// {"web_push": 8030,
///  "notification": {"title": …, "body": …, "navigate": "/activities/ID", "tag": THREAD,
///                   "silent": false, "data": {…the push's data…}},
///  "app_badge": 3}
/// ```
///
/// A badge update (docs/inbox.md#one-badge) is `{"app_badge": 3, "data": {…}}` alone.
public struct WebPushMessage: Sendable, Equatable {
    /// The plaintext JSON.
    public let body: [UInt8]
    /// `TTL`: seconds the push service keeps the message for an offline browser.
    public let ttl: Int
    /// `Urgency`: `high` for P0 and chat, `normal` otherwise.
    public let urgency: String
    /// `Topic`: a newer message with the same topic replaces one the push service still holds
    /// (the activity's id, as 32 hex digits); nil for chat, whose messages each count.
    public let topic: String?

    /// The longest TTL sent: four weeks, what push services keep at most.
    public static let maxTTL = 28 * 86_400

    /// - Parameter maxBytes: the plaintext's limit, made to fit (`PayloadFit`): what the push
    ///   service carries once encrypted.
    public init(_ notification: PushNotification, expiration: Date?, now: Date, maxBytes: Int = WebPushEncryption.maxPlaintext) {
        let content = notification.content
        body = PayloadFit.fit(notification, limit: maxBytes, encode: Self.encode).bytes
        let left = expiration.map { Int($0.timeIntervalSince(now).rounded(.down)) } ?? Self.maxTTL
        ttl = min(max(0, left), Self.maxTTL)
        urgency = content.isTimeSensitive || content.data[.conversationID] != nil ? "high" : "normal"
        topic = notification.collapseID.flatMap(Self.topic)
    }

    /// The Declarative Web Push body of `notification`.
    static func encode(_ notification: PushNotification) -> [UInt8] {
        let content = notification.content
        var json = JSONText(capacity: 512 + content.body.utf8.count + content.title.utf8.count)
        json.openObject()
        // A badge update has no notification: not a declarative push, the service worker
        // reads it and sets the badge (`navigator.setAppBadge`).
        if content.data.isBadgeOnly {
            json.integer("app_badge", content.badge)
            json.stringMap("data", content.data.fields)
            json.closeObject()
            return json.bytes
        }
        json.integer("web_push", 8030)
        json.openObject("notification")
        json.string("title", content.title)
        json.string("body", content.body)
        json.string("navigate", content.data.path)
        json.string("tag", content.threadID)
        json.boolean("silent", !content.sound)
        json.string("image", content.imageURL)
        json.stringMap("data", content.data.fields)
        json.closeObject()
        json.integer("app_badge", content.badge)
        json.closeObject()
        return json.bytes
    }

    /// RFC 8030 §5.4: at most 32 characters of the base64url alphabet; a UUID's hex digits are.
    static func topic(_ key: String) -> String? {
        let topic = String(key.lowercased().unicodeScalars.filter { $0 != "-" })
        let alphabet = Set("abcdefghijklmnopqrstuvwxyz0123456789_".utf8)
        guard (1...32).contains(topic.utf8.count), topic.utf8.allSatisfy(alphabet.contains) else { return nil }
        return topic
    }

    /// The request's headers besides `Authorization`.
    public var headers: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"), ("ttl", String(ttl)), ("urgency", urgency)
        ]
        if let topic { headers.append(("topic", topic)) }
        return headers
    }
}
