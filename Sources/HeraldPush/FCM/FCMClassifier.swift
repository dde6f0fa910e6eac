import Foundation

/// Reads FCM HTTP v1 answers (docs/notifications.md).
///
/// An error body looks like
/// `{"error": {"code": 404, "status": "NOT_FOUND", "message": "…", "details": [{"@type":
/// "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}}`;
/// the `FcmError` may sit anywhere in `details`.
public enum FCMClassifier {
    /// QUOTA_EXCEEDED waits at least this long, whatever `Retry-After` says.
    public static let quotaBackoff: Duration = .seconds(60)

    public static func classify(_ response: ProviderResponse, now: Date = Date()) -> DeliveryOutcome {
        if (200..<300).contains(response.status) {
            let name =
                simpleName(in: response.body)
                ?? (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["name"] as? String
            return .delivered(messageID: name)
        }
        let error = ErrorBody(response.body)
        let retryAfter = RetryAfter.parse(response.headers["retry-after"], now: now)
        let reason = error.describe(status: response.status)

        switch error.fcmErrorCode {
        case "UNREGISTERED", "SENDER_ID_MISMATCH":
            return .deadToken(reason: reason)
        case "INVALID_ARGUMENT":
            return error.isAboutTheToken ? .deadToken(reason: reason) : .badRequest(reason: reason)
        case "QUOTA_EXCEEDED":
            return .retry(after: max(retryAfter ?? quotaBackoff, quotaBackoff), reason: reason)
        case "UNAVAILABLE", "INTERNAL":
            return .retry(after: retryAfter, reason: reason)
        case "THIRD_PARTY_AUTH_ERROR":
            return .configurationError(reason: reason)
        default:
            break
        }
        // No FcmError detail (or an unknown one): go by the HTTP status.
        switch response.status {
        case 401: return .credentialsExpired(reason: reason)
        case 403, 404: return .configurationError(reason: reason)
        case 429, 500...599: return .retry(after: retryAfter, reason: reason)
        default: return .badRequest(reason: reason)
        }
    }

    /// The name in the answer FCM gives every accepted message, `{"name": "projects/…"}`,
    /// read without a JSON parser (JSONSerialization was 5 % of a worker's tasks in a
    /// burn-down); `nil` for anything else (other keys first, escapes), which the parser reads.
    static func simpleName(in body: [UInt8]) -> String? {
        var index = 0
        func skipSpace() {
            while index < body.count, [0x20, 0x09, 0x0A, 0x0D].contains(body[index]) { index += 1 }
        }
        func expect(_ text: String) -> Bool {
            for byte in text.utf8 {
                guard index < body.count, body[index] == byte else { return false }
                index += 1
            }
            return true
        }
        skipSpace()
        guard expect("{") else { return nil }
        skipSpace()
        guard expect("\"name\"") else { return nil }
        skipSpace()
        guard expect(":") else { return nil }
        skipSpace()
        guard expect("\"") else { return nil }
        let start = index
        while index < body.count, body[index] != UInt8(ascii: "\""), body[index] != UInt8(ascii: "\\"), body[index] >= 0x20 { index += 1 }
        let end = index
        guard expect("\"") else { return nil }
        skipSpace()
        guard index < body.count, body[index] == UInt8(ascii: "}") || body[index] == UInt8(ascii: ",") else { return nil }
        return String(decoding: body[start..<end], as: UTF8.self)
    }

    /// The parts of a Google API error body that matter here.
    struct ErrorBody {
        var status: String?
        var message: String?
        var fcmErrorCode: String?
        var badRequestFields: [String] = []

        init(_ body: [UInt8]) {
            guard let root = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                let error = root["error"] as? [String: Any]
            else { return }
            status = error["status"] as? String
            message = error["message"] as? String
            for detail in error["details"] as? [[String: Any]] ?? [] {
                let type = detail["@type"] as? String ?? ""
                if type.hasSuffix("google.firebase.fcm.v1.FcmError"), let code = detail["errorCode"] as? String {
                    fcmErrorCode = code
                }
                if type.hasSuffix("google.rpc.BadRequest") {
                    for violation in detail["fieldViolations"] as? [[String: Any]] ?? [] {
                        if let field = violation["field"] as? String { badRequestFields.append(field) }
                    }
                }
            }
        }

        /// INVALID_ARGUMENT about the registration token rather than the message.
        var isAboutTheToken: Bool {
            if badRequestFields.contains(where: { $0 == "message.token" }) { return true }
            let text = (message ?? "").lowercased()
            return text.contains("registration token") || text.contains("message.token")
        }

        func describe(status code: Int) -> String {
            var parts = [fcmErrorCode ?? status ?? "HTTP \(code)"]
            if let message, !message.isEmpty { parts.append(String(message.prefix(200))) }
            return parts.joined(separator: ": ")
        }
    }
}
