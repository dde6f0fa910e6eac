import Foundation
import HeraldTemplates

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
        path = "/3/device/\(notification.token)"
        var headers = [
            "apns-topic": topic, "apns-push-type": "alert", "apns-priority": "10",
            "apns-expiration": expiration.map { String(Int($0.timeIntervalSince1970)) } ?? "0",
        ]
        if let collapse = notification.collapseID { headers["apns-collapse-id"] = String(decoding: collapse.utf8.prefix(64), as: UTF8.self) }
        self.headers = headers
        body = Self.encode(notification, body: notification.body)
        if body.count > maxBytes {
            let shortened = TextShortening.shorten(notification.body) { Self.encode(notification, body: $0).count <= maxBytes }
            body = Self.encode(notification, body: shortened)
        }
    }

    private struct Payload: Encodable {
        var aps: APSDictionary
        var data: [String: String]

        func encode(to encoder: any Encoder) throws {
            // Custom data sits beside `aps` at the top level, as Apple expects.
            var container = encoder.container(keyedBy: DynamicKey.self)
            try container.encode(aps, forKey: DynamicKey("aps"))
            for (key, value) in data where key != "aps" { try container.encode(value, forKey: DynamicKey(key)) }
        }
    }

    private static func encode(_ notification: PushNotification, body: String) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(Payload(aps: APSDictionary(notification, body: body), data: notification.data))) ?? Data()
    }
}

struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ value: String) { stringValue = value }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
