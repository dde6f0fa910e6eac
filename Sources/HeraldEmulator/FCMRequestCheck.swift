import Foundation

/// Checks an FCM v1 send body the way FCM does, answering with FCM's error wording.
enum FCMRequestCheck {
    static let messageFields: Set<String> = [
        "name", "token", "fid", "topic", "condition", "notification", "data", "android", "apns", "webpush", "fcm_options"
    ]
    static let notificationFields: Set<String> = ["title", "body", "image"]
    /// FCM's ApnsConfig.
    static let apnsFields: Set<String> = ["headers", "payload", "fcm_options", "live_activity_token"]

    /// The message, or the INVALID_ARGUMENT message FCM would give.
    static func check(_ body: Data, maxBytes: Int = 4096) -> Result<[String: Any], CheckFailure> {
        guard body.count <= maxBytes else {
            return .failure(
                .init("Request contains an invalid argument: message is too big (\(body.count) bytes; limit \(maxBytes))", field: "message"))
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
            return .failure(
                .init("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.", field: "message.\(unknown)"))
        }
        let targets = ["token", "fid", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            return .failure(
                .init(
                    "Request contains an invalid argument: exactly one of token, fid, topic or condition is required (got \(targets.count))",
                    field: "message"))
        }
        if let token = message["token"], (token as? String)?.isEmpty != false {
            return .failure(.init("The registration token is not a valid FCM registration token", field: "message.token"))
        }
        if let fid = message["fid"], !isInstallationID(fid) {
            return .failure(.init("The Firebase Installation ID is not a valid FID", field: "message.fid"))
        }
        if let notification = message["notification"] {
            guard let fields = notification as? [String: Any] else {
                return .failure(.init("Invalid value at 'message.notification'", field: "message.notification"))
            }
            if let unknown = Set(fields.keys).subtracting(notificationFields).sorted().first {
                return .failure(
                    .init(
                        "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.notification': Cannot find field.",
                        field: "message.notification.\(unknown)"))
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
                return .failure(
                    .init(
                        "Invalid value at 'message.data[\(index)].value' (TYPE_STRING), \(pairs[key] ?? "null")",
                        field: "message.data[\(index)].value"))
            }
        }
        if let apns = message["apns"] {
            if let failure = checkAPNs(apns) { return .failure(failure) }
        }
        return .success(message)
    }

    /// A Firebase Installation ID: 22 characters of base64url.
    static func isInstallationID(_ value: Any) -> Bool {
        guard let text = value as? String, text.utf8.count == 22 else { return false }
        return text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }
    }

    /// `message.apns`: known fields only, `headers` a map of strings, `payload` an object,
    /// and an `apns-priority` APNs would take (5 or 10; 10 needs an alert, not a silent push).
    private static func checkAPNs(_ apns: Any) -> CheckFailure? {
        guard let fields = apns as? [String: Any] else { return .init("Invalid value at 'message.apns'", field: "message.apns") }
        if let unknown = Set(fields.keys).subtracting(apnsFields).sorted().first {
            return .init(
                "Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message.apns': Cannot find field.", field: "message.apns.\(unknown)")
        }
        if let payload = fields["payload"], !(payload is [String: Any]) {
            return .init("Invalid value at 'message.apns.payload'", field: "message.apns.payload")
        }
        guard let headers = fields["headers"] else { return nil }
        guard let pairs = headers as? [String: Any], pairs.values.allSatisfy({ $0 is String }) else {
            return .init("Invalid value at 'message.apns.headers' (TYPE_STRING)", field: "message.apns.headers")
        }
        if let priority = pairs["apns-priority"] as? String, !["5", "10"].contains(priority) {
            return .init("Request contains an invalid argument: invalid apns-priority \(priority)", field: "message.apns.headers")
        }
        if let collapse = pairs["apns-collapse-id"] as? String, collapse.utf8.count > 64 {
            return .init("Request contains an invalid argument: apns-collapse-id is longer than 64 bytes", field: "message.apns.headers")
        }
        return nil
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
