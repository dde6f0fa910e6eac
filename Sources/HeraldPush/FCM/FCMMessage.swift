import Foundation

/// The JSON body of an FCM HTTP v1 `messages:send` request.
public struct FCMMessage: Sendable, Equatable {
    /// FCM's limit on a message; the whole request is kept under it.
    public static let maxBytes = 4096

    /// The request body, with keys sorted so equal messages encode equally.
    public let body: [UInt8]

    /// Builds the request for `notification`, made to fit `maxBytes` (`PayloadFit`).
    public init(_ notification: PushNotification, maxBytes: Int = FCMMessage.maxBytes) {
        body = PayloadFit.fit(notification, limit: maxBytes, encode: Self.encode).bytes
    }

    public func encoded() -> Data { Data(body) }

    /// Room for the request `encode` writes (unless its strings need escapes): one buffer,
    /// where growing it copied the message and, past a kilobyte, took glibc's slower path
    /// for large blocks (measured with a probe on `malloc` in a burn-down).
    static func capacity(_ notification: PushNotification) -> Int {
        let data = notification.data.fields.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 }
        return 500 + (notification.collapseID?.utf8.count ?? 0) + 2
            * (notification.body.utf8.count + notification.title.utf8.count + notification.threadID.utf8.count)
            + 3 * (notification.imageURL?.utf8.count ?? 0) + notification.token.utf8.count + data
    }

    /// `{"message": {…}}`, written directly (this runs once per delivery).
    static func encode(_ notification: PushNotification) -> [UInt8] {
        var json = JSONText(capacity: capacity(notification))
        json.openObject()
        json.openObject("message")
        // A badge update is a data message (the app sets its badge), with no notification to show.
        let badgeOnly = notification.content.data.isBadgeOnly
        json.openObject("android")
        if !badgeOnly {
            json.openObject("notification")
            json.integer("notification_count", notification.badge)
            json.string("sound", notification.sound ? "default" : nil)
            json.string("tag", notification.threadID)
            json.closeObject()
        }
        json.string("priority", badgeOnly ? "normal" : "high")
        json.closeObject()
        json.openObject("apns")
        if let image = notification.imageURL {
            json.openObject("fcm_options")
            json.string("image", image)
            json.closeObject()
        }
        // The headers FCM passes on to APNs: without `apns-collapse-id` here, an iPhone
        // reached through FCM stacked every push about an activity instead of replacing it.
        json.openObject("headers")
        for (name, value) in APNsHeaders.common(notification) { json.string(name, value) }
        json.closeObject()
        json.openObject("payload")
        APSDictionary.write(notification, into: &json)
        json.closeObject()
        json.closeObject()
        json.stringMap("data", notification.data.fields)
        // An app on the newest Firebase SDKs is addressed by its installation id, and has no
        // registration token at all (`message.token` is deprecated in FCM's own clients).
        if notification.address == .fid { json.string("fid", notification.token) }
        if !badgeOnly {
            json.openObject("notification")
            json.string("body", notification.body)
            json.string("image", notification.imageURL)
            json.string("title", notification.title)
            json.closeObject()
        }
        if notification.address == .token { json.string("token", notification.token) }
        json.closeObject()
        json.closeObject()
        return json.bytes
    }
}

/// The APNs headers that FCM's `apns.headers` and direct APNs both send.
enum APNsHeaders {
    /// `apns-collapse-id` (when the notification has one, at most 64 bytes as Apple allows),
    /// `apns-priority` and `apns-push-type` (`liveactivity` for a Live Activity's), sorted by name.
    static func common(_ notification: PushNotification) -> [(String, String)] {
        var headers: [(String, String)] = []
        if let collapse = notification.collapseID {
            headers.append(("apns-collapse-id", String(decoding: collapse.utf8.prefix(64), as: UTF8.self)))
        }
        if let live = notification.content.liveActivity {
            // A Live Activity's: Apple's budget for priority 10 is small, reminders use 5.
            headers.append(("apns-priority", String(live.priority)))
            headers.append(("apns-push-type", "liveactivity"))
        } else {
            // A badge update is delivered when it suits the phone (priority 5).
            headers.append(("apns-priority", notification.content.data.isBadgeOnly ? "5" : "10"))
            headers.append(("apns-push-type", "alert"))
        }
        return headers
    }
}

/// The `aps` dictionary, shared by FCM's `apns` block and direct APNs.
enum APSDictionary {
    /// `"aps": {…}` with sorted keys.
    static func write(_ notification: PushNotification, into json: inout JSONText) {
        json.openObject("aps")
        // A badge update: `{"badge": N}` alone, which iOS applies without showing anything.
        if notification.content.data.isBadgeOnly {
            json.integer("badge", notification.badge)
            json.closeObject()
            return
        }
        json.openObject("alert")
        json.string("body", notification.body)
        json.string("title", notification.title)
        json.closeObject()
        json.integer("badge", notification.badge)
        json.string("category", notification.content.category)
        if notification.content.isTimeSensitive { json.string("interruption-level", "time-sensitive") }
        if notification.imageURL != nil { json.integer("mutable-content", 1) }
        json.string("sound", notification.sound ? "default" : nil)
        json.string("thread-id", notification.threadID)
        json.closeObject()
    }
}
