import Foundation
import HeraldTemplates

/// The JSON body of an FCM HTTP v1 `messages:send` request.
public struct FCMMessage: Sendable, Encodable, Equatable {
    /// FCM's limit on a message; the whole request is kept under it.
    public static let maxBytes = 4096

    public struct Message: Sendable, Encodable, Equatable {
        var token: String
        var notification: Notification
        var data: [String: String]
        var android: Android
        var apns: APNs
    }

    struct Notification: Sendable, Encodable, Equatable {
        var title: String
        var body: String
        var image: String?
    }

    struct Android: Sendable, Encodable, Equatable {
        struct Notification: Sendable, Encodable, Equatable {
            var tag: String
            var notificationCount: Int
            var sound: String?

            enum CodingKeys: String, CodingKey {
                case tag, sound
                case notificationCount = "notification_count"
            }
        }
        var priority = "high"
        var notification: Notification
    }

    struct APNs: Sendable, Encodable, Equatable {
        struct Payload: Sendable, Encodable, Equatable {
            var aps: APSDictionary
        }
        struct Options: Sendable, Encodable, Equatable {
            var image: String
        }
        var payload: Payload
        var fcmOptions: Options?

        enum CodingKeys: String, CodingKey {
            case payload
            case fcmOptions = "fcm_options"
        }
    }

    public var message: Message

    /// Builds the request for `notification`, shortening the body (on grapheme boundaries,
    /// ending in `...`) until the encoded request fits `maxBytes`.
    public init(_ notification: PushNotification, maxBytes: Int = FCMMessage.maxBytes) {
        message = Self.message(notification, body: notification.body)
        if encoded().count > maxBytes {
            let body = TextShortening.shorten(notification.body) { candidate in
                Self.encode(Self.message(notification, body: candidate)).count <= maxBytes
            }
            message = Self.message(notification, body: body)
        }
    }

    /// The request body, with keys sorted so equal messages encode equally.
    public func encoded() -> Data { Self.encode(message) }

    private static func encode(_ message: Message) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(["message": message])) ?? Data()
    }

    private static func message(_ notification: PushNotification, body: String) -> Message {
        Message(
            token: notification.token,
            notification: Notification(title: notification.title, body: body, image: notification.imageURL),
            data: notification.data,
            android: Android(
                notification: .init(tag: notification.threadID, notificationCount: notification.badge, sound: notification.sound ? "default" : nil)),
            apns: APNs(
                payload: .init(aps: APSDictionary(notification, body: body)),
                fcmOptions: notification.imageURL.map { .init(image: $0) }))
    }
}

/// The `aps` dictionary, shared by FCM's `apns` block and direct APNs.
struct APSDictionary: Sendable, Encodable, Equatable {
    struct Alert: Sendable, Encodable, Equatable {
        var title: String
        var body: String
    }
    var alert: Alert
    var badge: Int
    var sound: String?
    var threadID: String
    var mutableContent: Int?

    init(_ notification: PushNotification, body: String) {
        alert = Alert(title: notification.title, body: body)
        badge = notification.badge
        sound = notification.sound ? "default" : nil
        threadID = notification.threadID
        mutableContent = notification.imageURL == nil ? nil : 1
    }

    enum CodingKeys: String, CodingKey {
        case alert, badge, sound
        case threadID = "thread-id"
        case mutableContent = "mutable-content"
    }
}
