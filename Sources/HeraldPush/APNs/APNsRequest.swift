import Foundation

/// A request for APNs directly: the payload and the headers Apple requires.
public struct APNsRequest: Sendable, Equatable {
    /// APNs' limit on a notification payload.
    public static let maxBytes = 4096

    public var path: String
    public var headers: [String: String]
    public var body: Data

    /// - Parameters:
    ///   - topic: the app's bundle id (member or manager app).
    ///   - expiration: when APNs may stop trying; nil sends `0` (deliver now or never).
    public init(_ notification: PushNotification, topic: String, expiration: Date? = nil, maxBytes: Int = APNsRequest.maxBytes) {
        // Registration accepts only hex tokens; escaping keeps anything else one path segment
        // (no slash, no dot segment, no query or fragment).
        path = "/3/device/" + (notification.token.addingPercentEncoding(withAllowedCharacters: Self.tokenCharacters) ?? "")
        var headers = Dictionary(uniqueKeysWithValues: APNsHeaders.common(notification))
        // A Live Activity's pushes go to the app's Live Activity topic.
        headers["apns-topic"] = notification.content.liveActivity == nil ? topic : topic + LiveActivityPayload.topicSuffix
        headers["apns-expiration"] = expiration.map { String(Int($0.timeIntervalSince1970)) } ?? "0"
        self.headers = headers
        body = Data(PayloadFit.fit(notification, limit: maxBytes, encode: Self.encode).bytes)
    }

    /// What stays as written in the token's path segment: ASCII letters, digits, `-`, `_`, `~`.
    static let tokenCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~")

    /// The payload: `aps` and the custom data side by side at the top level, as Apple
    /// expects, keys sorted.
    private static func encode(_ notification: PushNotification) -> [UInt8] {
        var json = JSONText(capacity: 512 + notification.body.utf8.count)
        json.openObject()
        for key in (notification.data.fields.keys.filter { $0 != "aps" } + ["aps"]).sorted() {
            if key == "aps", let live = notification.content.liveActivity {
                LiveActivityPayload.write(live, title: notification.title, body: notification.body, into: &json)
            } else if key == "aps" {
                APSDictionary.write(notification, into: &json)
            } else {
                json.string(key, notification.data.fields[key] ?? "")
            }
        }
        json.closeObject()
        return json.bytes
    }
}
