import Foundation
import HTTPTypes
import HeraldPush
import Hummingbird
import HummingbirdCore
import NIOCore

/// Routes a request to the FCM, OAuth, APNs or control endpoint.
struct EmulatorResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let emulator: Emulator
    let httpVersion: String

    func respond(to request: Request, context: Context) async throws -> Response {
        let body = Data(buffer: try await request.body.collect(upTo: Self.maximumBody))
        let faults = emulator.state.faults
        let wait = delay(method: request.method, path: request.uri.path, faults: faults)
        if wait > .zero { try? await Task.sleep(for: wait) }
        return Response(answer(method: request.method, path: request.uri.path, headers: request.headers, body: body, faults: faults))
    }

    /// The largest request body the emulator reads (1 MB).
    static let maximumBody = 1 << 20

    /// How long a request waits before it is answered: the injected latency for a send, as
    /// `faults` (those in force when it arrived) say.
    func delay(method: HTTPRequest.Method, path: String, faults: EmulatorConfiguration.Faults) -> Duration {
        guard method == .post, Self.isSend(path) else { return .zero }
        return faults.latency
    }

    static func isSend(_ path: String) -> Bool { isFCMSend(path) || isAPNsSend(path) || isWebPushSend(path) }
    static func isFCMSend(_ path: String) -> Bool { path.hasPrefix("/v1/projects/") && path.hasSuffix("/messages:send") }
    static func isAPNsSend(_ path: String) -> Bool { path.hasPrefix("/3/device/") }

    /// The answer to a request read whole, at once (every endpoint's work is a few steps under
    /// the state's lock; the latency a send waits is `delay`'s, before it).
    /// - Parameter faults: the faults in force when the request arrived (a send that waited
    ///   out an injected latency is answered as they said, not as faults set meanwhile say:
    ///   503 and a latency together are a provider that hangs, then fails).
    func answer(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: Data, faults: EmulatorConfiguration.Faults) -> EmulatorAnswer {
        switch (method, path) {
        case (.post, "/token"):
            return token(body)
        case (.post, _) where Self.isFCMSend(path):
            return fcmSend(headers, path: path, body: body, faults: faults)
        case (.post, _) where Self.isAPNsSend(path):
            return apnsSend(headers, token: String(path.dropFirst("/3/device/".count)), body: body, faults: faults)
        case (.post, _) where Self.isWebPushSend(path):
            return webPushSend(headers, id: String(path.dropFirst("/webpush/".count)), body: body, faults: faults)
        case (.post, _) where Self.isWebhook(path):
            return webhook(headers)
        case (_, _) where path.hasPrefix("/emulator/webpush/subscriptions"):
            return webPushControl(method: method, path: path, body: body)
        case (.get, "/emulator/messages"):
            return encoded(emulator.state.messages)
        case (.delete, "/emulator/messages"):
            emulator.state.clear()
            return json(200, Data(#"{"cleared": true}"#.utf8))
        case (.get, "/emulator/faults"):
            return encoded(FaultSettings(emulator.state.faults))
        case (.put, "/emulator/faults"):
            return setFaults(body)
        case (.get, "/emulator/stats"):
            let webhooks = emulator.state.webhooks
            let stats: [String: Int] = [
                "connections": emulator.connectionCount, "accepted": emulator.state.accepted,
                "rejected": emulator.state.rejected,
                "webhooks": webhooks.received, "webhookRepeats": webhooks.repeated,
                // This process's CPU, user and system (for `herald bench`'s cost per request).
                "cpuMicroseconds": EmulatorResponder.processCPUMicroseconds()
            ]
            return encoded(stats)
        default:
            return json(404, Data(#"{"error": {"code": 404, "message": "no such endpoint on the emulator", "status": "NOT_FOUND"}}"#.utf8))
        }
    }

    // MARK: OAuth

    static let fcmScopes: Set<String> = Set(["firebase.messaging", "firebase", "cloud-platform"].map { "https://www.googleapis.com/auth/" + $0 })

    private func token(_ body: Data) -> EmulatorAnswer {
        let form = Self.formFields(String(decoding: body, as: UTF8.self))
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else {
            return json(400, Data(#"{"error": "unsupported_grant_type", "error_description": "Invalid grant_type"}"#.utf8))
        }
        guard let claims = EmulatorJWT.verifiedRS256(assertion, key: emulator.signingKey.publicKey) else {
            emulator.state.countRejection()
            return json(400, Data(#"{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}"#.utf8))
        }
        let now = Int(Date().timeIntervalSince1970)
        let issued = claims["iat"] as? Int ?? 0
        let expires = claims["exp"] as? Int ?? 0
        let scopes = (claims["scope"] as? String ?? "").split(separator: " ")
        guard claims["iss"] as? String == emulator.clientEmail, (claims["aud"] as? String ?? "").hasSuffix("/token"),
            // FCM takes any of these (the Admin SDKs ask for cloud-platform and firebase).
            scopes.contains(where: { Self.fcmScopes.contains(String($0)) }),
            expires > now, expires - issued <= 3600, issued <= now + 300
        else {
            emulator.state.countRejection()
            return json(400, Data(#"{"error": "invalid_grant", "error_description": "Invalid JWT: claims are wrong or expired."}"#.utf8))
        }
        let token = emulator.state.issueAccessToken()
        return json(200, Data(#"{"access_token": "\#(token)", "expires_in": 3599, "token_type": "Bearer"}"#.utf8))
    }

    static func formFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let key = parts[0].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(parts[0])
            fields[key] = parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(parts[1])
        }
        return fields
    }

    // MARK: FCM

    private func fcmSend(_ headers: HTTPFields, path: String, body: Data, faults: EmulatorConfiguration.Faults) -> EmulatorAnswer {
        let state = emulator.state
        let bearer = headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, state.isValid(accessToken: bearer) else {
            state.countRejection()
            return fcmError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token.", fcm: nil)
        }
        let project = path.dropFirst("/v1/projects/".count).dropLast("/messages:send".count)
        guard project == emulator.configuration.projectID else {
            state.countRejection()
            return fcmError(403, "PERMISSION_DENIED", "Permission denied on project \(project).", fcm: nil)
        }
        let message: [String: Any]
        switch FCMRequestCheck.check(body) {
        case .failure(let failure):
            state.countRejection()
            return fcmError(400, "INVALID_ARGUMENT", failure.message, fcm: "INVALID_ARGUMENT", field: failure.field)
        case .success(let checked):
            message = checked
        }
        // The app instance, by its token or by its installation id (FCM answers UNREGISTERED
        // for either once it is gone).
        let fid = message["fid"] as? String
        let token = fid ?? message["token"] as? String ?? ""
        if let prefix = faults.deadTokenPrefix, !prefix.isEmpty, token.hasPrefix(prefix) {
            state.countRejection()
            return fcmError(404, "NOT_FOUND", "Requested entity was not found.", fcm: "UNREGISTERED")
        }
        switch state.drawFault(faults) {
        case .unavailable:
            state.countRejection()
            return fcmError(503, "UNAVAILABLE", "The service is currently unavailable.", fcm: "UNAVAILABLE", retryAfter: faults.retryAfterSeconds)
        case .throttled:
            state.countRejection()
            return fcmError(
                429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Messages'.", fcm: "QUOTA_EXCEEDED", retryAfter: faults.retryAfterSeconds)
        case .none:
            break
        }
        let id = "0:\(UInt64(Date().timeIntervalSince1970 * 1000))%\(UUID().uuidString.prefix(8).lowercased())"
        let notification = message["notification"] as? [String: String]
        state.record(
            RecordedMessage(
                id: id, provider: "fcm", token: token, address: fid == nil ? "token" : "fid", title: notification?["title"],
                body: notification?["body"], payload: String(decoding: body, as: UTF8.self), headers: [:], receivedAt: Date(),
                httpVersion: httpVersion))
        return json(200, Data(#"{"name": "projects/\#(project)/messages/\#(id)"}"#.utf8))
    }

    private func fcmError(_ code: Int, _ status: String, _ message: String, fcm: String?, field: String? = nil, retryAfter: Int? = nil)
        -> EmulatorAnswer
    {
        var details: [[String: Any]] = []
        if let field {
            details.append(["@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [["field": field, "description": message]]])
        }
        if let fcm { details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcm]) }
        let object: [String: Any] = ["error": ["code": code, "message": message, "status": status, "details": details]]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return json(code, data, retryAfter: retryAfter)
    }

    // MARK: APNs

    private func apnsSend(_ headers: HTTPFields, token: String, body: Data, faults: EmulatorConfiguration.Faults) -> EmulatorAnswer {
        let state = emulator.state
        func reason(_ status: Int, _ reason: String, retryAfter: Int? = nil) -> EmulatorAnswer {
            state.countRejection()
            return json(status, Data(#"{"reason": "\#(reason)"}"#.utf8), retryAfter: retryAfter)
        }
        guard let authorization = headers[.authorization], authorization.lowercased().hasPrefix("bearer ") else {
            return reason(403, "MissingProviderToken")
        }
        // Checked the way APNs does: an ES256 JWT with kid, iss and an iat under an hour old,
        // signed by the key its kid names. The emulator knows the keys it was told of
        // (`trustAPNsKey`, as the gateway it makes does); another key's signature it cannot
        // check, since only Apple has the team's public keys, so only its shape counts.
        let jwt = EmulatorJWT.parts(of: String(authorization.dropFirst("bearer ".count)))
        guard let jwt, jwt.header["alg"] as? String == "ES256", let keyID = jwt.header["kid"] as? String, jwt.claims["iss"] is String,
            let issuedAt = jwt.claims["iat"] as? Int
        else { return reason(403, "InvalidProviderToken") }
        if let key = emulator.apnsKey(keyID), !EmulatorJWT.isValidES256(jwt, key: key) { return reason(403, "InvalidProviderToken") }
        if Int(Date().timeIntervalSince1970) - issuedAt > 3600 { return reason(403, "ExpiredProviderToken") }
        guard let topic = headers[HTTPField.Name("apns-topic")!], !topic.isEmpty else { return reason(400, "MissingTopic") }
        guard let pushType = headers[HTTPField.Name("apns-push-type")!] else { return reason(400, "InvalidPushType") }
        if let collapse = headers[HTTPField.Name("apns-collapse-id")!], collapse.utf8.count > 64 {
            return reason(400, "BadCollapseId")
        }
        guard token.count >= 8, token.allSatisfy({ $0.isHexDigit || $0 == "-" || $0.isLetter }) else { return reason(400, "BadDeviceToken") }
        guard body.count <= 4096 else { return reason(413, "PayloadTooLarge") }
        guard let payload = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let aps = payload["aps"] as? [String: Any] else {
            return reason(400, "PayloadEmpty")
        }
        if let refusal = APNsRequestCheck.refusal(
            pushType: pushType, priority: headers[HTTPField.Name("apns-priority")!], topic: topic, aps: aps)
        {
            return reason(400, refusal)
        }
        if let prefix = faults.deadTokenPrefix, !prefix.isEmpty, token.hasPrefix(prefix) { return reason(410, "Unregistered") }
        switch state.drawFault(faults) {
        case .unavailable: return reason(503, "ServiceUnavailable", retryAfter: faults.retryAfterSeconds)
        case .throttled: return reason(429, "TooManyRequests", retryAfter: faults.retryAfterSeconds)
        case .none: break
        }
        let alert = aps["alert"] as? [String: String]
        let id = UUID().uuidString
        var apnsHeaders: [String: String] = [:]
        for field in headers where field.name.canonicalName.hasPrefix("apns-") {
            apnsHeaders[field.name.canonicalName] = field.value
        }
        state.record(
            RecordedMessage(
                id: id, provider: "apns", token: token, title: alert?["title"], body: alert?["body"],
                payload: String(decoding: body, as: UTF8.self), headers: apnsHeaders, receivedAt: Date(), httpVersion: httpVersion))
        var answer = EmulatorAnswer(status: .ok, headers: [:], body: ByteBuffer())
        answer.headers[HTTPField.Name("apns-id")!] = id
        answer.headers[.contentLength] = "0"
        return answer
    }

    // MARK: Helpers

    /// `value` as the control endpoints' JSON, or a 500 that says why it could not be.
    func encoded(_ value: some Encodable) -> EmulatorAnswer {
        do {
            return json(200, try JSONEncoder.emulator.encode(value))
        } catch {
            return fcmError(500, "INTERNAL", "could not encode the answer: \(error)", fcm: nil)
        }
    }

    func json(_ status: Int, _ data: Data, retryAfter: Int? = nil) -> EmulatorAnswer {
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8", .contentLength: String(data.count)]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return EmulatorAnswer(status: .init(code: status), headers: headers, body: ByteBuffer(bytes: data))
    }

    static func processCPUMicroseconds() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }
}

extension JSONEncoder {
    /// The control endpoints' JSON: dates in ISO 8601 with fractional seconds (when a message
    /// arrived matters to the millisecond in benchmarks and the failover check).
    static var emulator: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return encoder
    }
}

extension JSONDecoder {
    /// Reads what the emulator's control endpoints answer (`JSONEncoder.emulator`).
    public static var emulator: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
        }
        return decoder
    }
}
