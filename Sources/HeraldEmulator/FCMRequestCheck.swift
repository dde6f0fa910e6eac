import Foundation

/// Checks an FCM v1 send body the way FCM does, answering with FCM's error wording.
enum FCMRequestCheck {
    static let messageFields: Set<String> = ["name", "token", "topic", "condition", "notification", "data", "android", "apns", "webpush", "fcm_options"]
    static let notificationFields: Set<String> = ["title", "body", "image"]

    /// The message, or the INVALID_ARGUMENT message FCM would give.
    static func check(_ body: Data, maxBytes: Int = 4096) -> Result<[String: Any], CheckFailure> {
        guard body.count <= maxBytes else {
            return .failure(.init("Request contains an invalid argument: message is too big (\(body.count) bytes; limit \(maxBytes))", field: "message"))
        }
        guard let root = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
            return .failure(.init("Invalid JSON payload received.", field: nil))
        }
        guard let message = root["message"] as? [String: Any] else {
            return .failure(.init("Invalid JSON payload received. Unknown name or missing \"message\".", field: "message"))
        }
        if let unknown = Set(root.keys).subtracting(["message", "validate_only"]).sorted().first {
            return .failure(.init("Invalid JSON payload received. Unknown name \"\(unknown)\": Cannot find field.", field: unknown))
        }
        if let unknown = Set(message.keys).subtracting(messageFields).sorted().first {
            return .failure(.init("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.", field: "message.\(unknown)"))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            return .failure(.init("Request contains an invalid argument: exactly one of token, topic or condition is required (got \(targets.count))", field: "message"))
        }
        if let token = message["token"], (token as? String)?.isEmpty != false {
            return .failure(.init("The registration token is not a valid FCM registration token", field: "message.token"))
        }
        if let notification = message["notification"] {
            guard let fields = notification as? [String: Any] else {
                return .failure(.init("Invalid value at 'message.notification'", field: "message.notification"))
            }
            if let unknown = Set(fields.keys).subtracting(notificationFields).sorted().first {
                return .failure(.init("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.notification': Cannot find field.", field: "message.notification.\(unknown)"))
            }
            if fields.values.contains(where: { !($0 is String) }) {
                return .failure(.init("Invalid value at 'message.notification' (TYPE_STRING)", field: "message.notification"))
            }
        }
        if let data = message["data"] {
            guard let pairs = data as? [String: Any] else {
                return .failure(.init("Invalid value at 'message.data'", field: "message.data"))
            }
            // JSONSerialization gives numbers and booleans as NSNumber, which is not a String.
            for (index, key) in pairs.keys.sorted().enumerated() where !(pairs[key] is String) {
                return .failure(.init("Invalid value at 'message.data[\(index)].value' (TYPE_STRING), \(pairs[key] ?? "null")", field: "message.data[\(index)].value"))
            }
        }
        return .success(message)
    }

    struct CheckFailure: Error {
        let message: String
        let field: String?
        init(_ message: String, field: String?) {
            self.message = message
            self.field = field
        }
    }
}
