import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldPush
import NIOCore

extension EmulatorResponder {
    static func isWebPushSend(_ path: String) -> Bool { path.hasPrefix("/webpush/") }

    /// The control endpoints of the push service: `POST /emulator/webpush/subscriptions`
    /// (`{"applicationServerKey"?}` → a subscription as the browser gives it), and on
    /// `/emulator/webpush/subscriptions/ID`: `GET` (online, held), `PUT {"online": BOOL}`,
    /// `DELETE` (the browser unsubscribes).
    func webPushControl(method: HTTPRequest.Method, path: String, body: Data) -> EmulatorAnswer {
        let service = emulator.webPush
        let prefix = "/emulator/webpush/subscriptions"
        if path == prefix {
            guard method == .post else { return json(405, Data(#"{"error": "POST makes a subscription"}"#.utf8)) }
            let given = body.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            guard let given else { return json(400, Data(#"{"error": "a body of {\"applicationServerKey\": KEY} or none"}"#.utf8)) }
            guard let subscription = service.subscribe(serverKey: given["applicationServerKey"] as? String),
                let data = try? JSONSerialization.data(withJSONObject: subscription, options: [.sortedKeys, .withoutEscapingSlashes])
            else { return json(503, Data(#"{"error": "the push service is not listening yet, or holds too many subscriptions"}"#.utf8)) }
            return json(201, data)
        }
        let id = String(path.dropFirst(prefix.count + 1))
        switch method {
        case .get:
            guard let subscription = service.subscription(id) else { return json(404, Data(#"{"error": "no such subscription"}"#.utf8)) }
            return encoded(SubscriptionState(online: subscription.online, unsubscribed: subscription.unsubscribed, held: subscription.held))
        case .put:
            guard let online = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["online"] as? Bool else {
                return json(400, Data(#"{"error": "a body of {\"online\": true|false}"}"#.utf8))
            }
            guard let delivered = service.setOnline(id, online) else { return json(404, Data(#"{"error": "no such subscription"}"#.utf8)) }
            for message in delivered { emulator.state.record(message) }
            return encoded(SubscriptionState(online: online, unsubscribed: false, held: []))
        case .delete:
            guard service.unsubscribe(id) else { return json(404, Data(#"{"error": "no such subscription"}"#.utf8)) }
            return json(200, Data(#"{"unsubscribed": true}"#.utf8))
        default:
            return json(405, Data(#"{"error": "GET, PUT or DELETE"}"#.utf8))
        }
    }

    struct SubscriptionState: Encodable {
        let online: Bool
        let unsubscribed: Bool
        let held: [RecordedMessage]
    }

    /// `POST /webpush/ID`: one push, checked as a push service checks it.
    func webPushSend(_ headers: HTTPFields, id: String, body: Data, faults: EmulatorConfiguration.Faults) -> EmulatorAnswer {
        let state = emulator.state
        func refuse(_ status: Int, _ reason: String, retryAfter: Int? = nil) -> EmulatorAnswer {
            state.countRejection()
            return json(status, Data(#"{"reason": "\#(reason)"}"#.utf8), retryAfter: retryAfter)
        }
        guard let subscription = emulator.webPush.subscription(id), let base = emulator.webPush.base.withLock({ $0 }) else {
            return refuse(404, "no such subscription")
        }
        if subscription.unsubscribed { return refuse(410, "the subscription was unsubscribed") }
        // RFC 8292: `vapid t=JWT, k=KEY`; the token signed by k, for this origin, unexpired, at most a day ahead.
        guard let authorization = headers[.authorization], let vapid = Self.vapidParameters(authorization) else {
            return refuse(401, "Authorization: vapid t=…, k=… is required")
        }
        guard let keyBytes = Base64URL.decode(vapid.k), let key = try? P256.Signing.PublicKey(x963Representation: keyBytes),
            let jwt = EmulatorJWT.parts(of: vapid.t), EmulatorJWT.isValidES256(jwt, key: key)
        else { return refuse(401, "the VAPID token does not verify with its key") }
        let now = Int(Date().timeIntervalSince1970)
        guard let audience = jwt.claims["aud"] as? String, audience == base else { return refuse(401, "the VAPID token's aud is not \(base)") }
        guard let expires = jwt.claims["exp"] as? Int, expires > now, expires <= now + 86_400 else {
            return refuse(401, "the VAPID token's exp is not within the next 24 hours")
        }
        guard let subject = jwt.claims["sub"] as? String, subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else {
            return refuse(401, "the VAPID token's sub is not a mailto: or https: URL")
        }
        if let serverKey = subscription.serverKey, serverKey != vapid.k {
            return refuse(403, "the subscription was made with another applicationServerKey")
        }
        guard let ttlText = headers[HTTPField.Name("ttl")!], let ttl = Int(ttlText), ttl >= 0 else { return refuse(400, "TTL is required") }
        let urgency = headers[HTTPField.Name("urgency")!] ?? "normal"
        guard ["very-low", "low", "normal", "high"].contains(urgency) else { return refuse(400, "Urgency is very-low, low, normal or high") }
        let topic = headers[HTTPField.Name("topic")!]
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        if let topic, !(1...32).contains(topic.utf8.count) || !topic.utf8.allSatisfy(alphabet.contains) {
            return refuse(400, "Topic is at most 32 characters of base64url")
        }
        guard headers[HTTPField.Name("content-encoding")!]?.lowercased() == "aes128gcm" else {
            return refuse(415, "Content-Encoding: aes128gcm is required")
        }
        guard body.count <= WebPushEncryption.maxBody else { return refuse(413, "the body is over 4096 bytes") }
        let plaintext: [UInt8]
        do {
            let browser = try P256.KeyAgreement.PrivateKey(rawRepresentation: subscription.privateKey)
            plaintext = try WebPushEncryption.decrypt(Array(body), browser: browser, auth: subscription.auth)
        } catch {
            return refuse(400, "the body does not decrypt: \(error)")
        }
        switch state.drawFault(faults) {
        case .unavailable: return refuse(503, "unavailable", retryAfter: faults.retryAfterSeconds)
        case .throttled: return refuse(429, "too many requests", retryAfter: faults.retryAfterSeconds)
        case .none: break
        }
        let declared = (try? JSONSerialization.jsonObject(with: Data(plaintext))) as? [String: Any]
        let notification = declared?["notification"] as? [String: Any]
        var recorded = ["ttl": String(ttl), "urgency": urgency, "vapid-sub": subject, "vapid-aud": audience, "vapid-exp": String(expires)]
        recorded["topic"] = topic
        let messageID = UUID().lowercasedString
        let message = RecordedMessage(
            id: messageID, provider: "webpush", token: "\(base)/webpush/\(id)", title: notification?["title"] as? String,
            body: notification?["body"] as? String, payload: String(decoding: plaintext, as: UTF8.self), headers: recorded, receivedAt: Date(),
            httpVersion: httpVersion)
        if !emulator.webPush.hold(message, for: id, topic: topic) { state.record(message) }
        var answer = EmulatorAnswer(status: .created, headers: [:], body: ByteBuffer())
        answer.headers[.location] = "\(base)/webpush/messages/\(messageID)"
        answer.headers[.contentLength] = "0"
        return answer
    }

    /// `t` and `k` of `vapid t=…, k=…`.
    static func vapidParameters(_ value: String) -> (t: String, k: String)? {
        guard value.lowercased().hasPrefix("vapid ") else { return nil }
        var t: String?
        var k: String?
        for part in value.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { t = String(pair[1]) }
            if pair[0] == "k" { k = String(pair[1]) }
        }
        guard let t, let k else { return nil }
        return (t, k)
    }
}
