import Crypto
import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import HeraldPush
import Testing

/// Web Push against the emulator's push service (docs/apps.md#web-push-browsers-and-installed-web-apps): what a browser would
/// decrypt, the VAPID token a push service checks, and what its answers become.
@Suite struct WebPushTests {
    static let subject = "mailto:operator@herald.test"

    /// A provider with a fresh key, allowed (or not) to reach loopback over HTTP, and a browser subscribed with its key.
    func withProvider(
        allowPrivate: Bool = true, _ body: @escaping @Sendable (Emulator, WebPushProvider, VAPIDCredentials, WebPushSubscription) async throws -> Void
    ) async throws {
        try await Emulator.withRunning(logger: quiet) { emulator, _ in
            let http = try HTTPClient(configuration: .init(http1Only: true, engine: .libcurl), logger: quiet)
            defer { http.shutdown() }
            let credentials = try VAPIDCredentials(pem: VAPIDCredentials.newKey().pem, subject: Self.subject)
            let policy = DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: allowPrivate)
            let given = try #require(emulator.subscribeBrowser(applicationServerKey: credentials.publicKey))
            let subscription = try WebPushSubscription(
                endpoint: given.endpoint, p256dh: given.p256dh, auth: given.auth,
                policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true))
            try await body(emulator, WebPushProvider(credentials: credentials, policy: policy, http: http), credentials, subscription)
        }
    }

    func push(_ subscription: WebPushSubscription, title: String = "Approved", data: PushPayload? = nil, collapse: String? = nil)
        -> PushNotification
    {
        let activity = "0193a1b2-0000-7000-8000-00000000abcd"
        return PushNotification(
            token: subscription.endpoint,
            content: NotificationContent(
                title: title, body: "Carol Diaz approved Fence repair",
                data: data ?? ["type": "activity.approved", "activityId": activity, "priority": "P2"], badge: 3, sound: true, threadID: activity),
            collapseID: collapse, subscription: subscription)
    }

    @Test func aPushDecryptsToDeclarativeJSONAndItsVAPIDTokenVerifies() async throws {
        try await withProvider { emulator, provider, credentials, subscription in
            let answer = try await provider.deliver(push(subscription, collapse: "0193a1b2-0000-7000-8000-00000000abcd"), expiration: Date() + 3600)
            guard case .delivered(let id) = answer.outcome else { throw Failure("expected a delivery, got \(answer)") }
            #expect(answer.httpStatus == 201 && id != nil)
            let message = try #require(await emulator.messages().first)
            #expect(message.provider == "webpush" && message.token == subscription.endpoint)
            // What the browser reads once it decrypted the body.
            let json = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
            #expect(json["web_push"] as? Int == 8030)
            #expect(json["app_badge"] as? Int == 3)
            let shown = try #require(json["notification"] as? [String: Any])
            #expect(shown["title"] as? String == "Approved")
            #expect(shown["body"] as? String == "Carol Diaz approved Fence repair")
            #expect(shown["navigate"] as? String == "/activities/0193a1b2-0000-7000-8000-00000000abcd")
            #expect(shown["tag"] as? String == "0193a1b2-0000-7000-8000-00000000abcd")
            #expect((shown["data"] as? [String: String])?["type"] == "activity.approved")
            // RFC 8030's headers: a P2 is normal, the deadline an hour away, the activity its topic.
            #expect(message.headers["urgency"] == "normal")
            #expect((3000...3600).contains(Int(message.headers["ttl"] ?? "") ?? -1))
            #expect(message.headers["topic"] == "0193a1b200007000800000000000abcd")
            // The token the push service checked: signed by the key pages subscribe with, for its origin, within a day.
            #expect(message.headers["vapid-sub"] == Self.subject)
            #expect(message.headers["vapid-aud"] == subscription.origin)
            let expires = try #require(Int(message.headers["vapid-exp"] ?? ""))
            let now = Int(Date().timeIntervalSince1970)
            #expect(expires > now + 11 * 3600 && expires <= now + 12 * 3600 + 5)
            let header = try credentials.authorization(for: subscription.origin)
            #expect(try Self.verifies(header, key: credentials.publicKey, audience: subscription.origin))
            // The same token is reused for the origin, not signed for every push.
            #expect(try credentials.authorization(for: subscription.origin) == header)
        }
    }

    /// Verifies a `vapid t=…, k=…` header with CryptoKit's verifier directly (not the emulator's).
    static func verifies(_ header: String, key: String, audience: String) throws -> Bool {
        let parts = header.dropFirst("vapid ".count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let token = try #require(parts.first { $0.hasPrefix("t=") }).dropFirst(2)
        #expect(parts.contains("k=\(key)"))
        let pieces = token.split(separator: ".")
        let claimBytes = try #require(Base64URL.decode(String(pieces[1])))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any])
        #expect(claims["aud"] as? String == audience && claims["sub"] as? String == subject)
        let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(Base64URL.decode(key)))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(String(pieces[2]))))
        return publicKey.isValidSignature(signature, for: Data("\(pieces[0]).\(pieces[1])".utf8))
    }

    @Test func chatIsHighUrgencyAndNavigatesToItsConversation() async throws {
        try await withProvider { emulator, provider, _, subscription in
            let chat = push(subscription, title: "Alice", data: ["type": "new_message", "conversationID": "c-1"])
            #expect(try await provider.deliver(chat, expiration: nil).httpStatus == 201)
            let message = try #require(await emulator.messages().first)
            #expect(message.headers["urgency"] == "high" && message.headers["topic"] == nil)
            #expect(message.payload.contains(#""navigate":"/conversations/c-1""#))
        }
    }

    @Test func aNewerPushWithTheSameTopicReplacesTheOneTheServiceHolds() async throws {
        try await withProvider { emulator, provider, _, subscription in
            let activity = "0193a1b2-0000-7000-8000-00000000abcd"
            emulator.setBrowserOnline(subscription.endpoint, false)
            _ = try await provider.deliver(push(subscription, title: "Assigned", collapse: activity), expiration: nil)
            _ = try await provider.deliver(push(subscription, title: "Approved", collapse: activity), expiration: nil)
            _ = try await provider.deliver(push(subscription, title: "Other", collapse: "0193a1b2-0000-7000-8000-0000000000ff"), expiration: nil)
            #expect(emulator.heldPushes(subscription.endpoint).map(\.title) == ["Approved", "Other"])
            emulator.setBrowserOnline(subscription.endpoint, true)
            #expect(await emulator.messages().map(\.title) == ["Approved", "Other"])
        }
    }

    @Test func aGoneSubscriptionIsADeadTokenThrottlingWaitsAsToldAndTooLargeIsShortened() async throws {
        try await withProvider { emulator, provider, _, subscription in
            await emulator.setFaults(.init(throttledShare: 1, retryAfterSeconds: 7))
            let throttled = try await provider.deliver(push(subscription), expiration: nil)
            #expect(throttled.httpStatus == 429)
            guard case .retry(let after, _) = throttled.outcome else { throw Failure("429 is retried, got \(throttled)") }
            #expect(after == .seconds(7))
            await emulator.setFaults(.init(unavailableShare: 1, retryAfterSeconds: 3))
            let unavailable = try await provider.deliver(push(subscription), expiration: nil)
            guard case .retry(.seconds(3)?, _) = unavailable.outcome else { throw Failure("503 is retried after Retry-After, got \(unavailable)") }
            await emulator.setFaults(.init())
            // A push too large for Web Push is made to fit (docs/apps.md#what-a-push-holds), never refused.
            let tooLong = push(subscription, title: String(repeating: "x", count: 5_000))
            guard case .delivered = try await provider.deliver(tooLong, expiration: nil).outcome else {
                throw Failure("a push over 4 KB is shortened to fit")
            }
            let shown = try #require(await emulator.messages().last?.title)
            #expect(shown.hasSuffix("...") && shown.utf8.count < 3_993 && shown.utf8.count > 3_000)
            emulator.unsubscribeBrowser(subscription.endpoint)
            let gone = try await provider.deliver(push(subscription), expiration: nil)
            #expect(gone.httpStatus == 410)
            guard case .deadToken = gone.outcome else { throw Failure("410 is a dead subscription, got \(gone)") }
        }
    }

    @Test func anotherServerKeyIsRefusedForThisSubscription() async throws {
        try await withProvider { emulator, _, _, subscription in
            let http = try HTTPClient(configuration: .init(http1Only: true, engine: .libcurl), logger: quiet)
            defer { http.shutdown() }
            let other = try VAPIDCredentials(pem: VAPIDCredentials.newKey().pem, subject: Self.subject)
            let provider = WebPushProvider(credentials: other, policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true), http: http)
            let answer = try await provider.deliver(push(subscription), expiration: nil)
            #expect(answer.httpStatus == 403)
            guard case .badRequest = answer.outcome else { throw Failure("403 fails this delivery, got \(answer)") }
            #expect(await emulator.messages().isEmpty)
        }
    }

    /// Registered as a name (`localhost`), the endpoint passes the registration's check; the
    /// address the name resolves to is checked again when connecting, and loopback is refused.
    @Test func anEndpointWhoseNameLeadsInsideIsRefusedAtConnectTime() async throws {
        try await withProvider(allowPrivate: false) { emulator, provider, _, subscription in
            let named = subscription.endpoint.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let strict = DestinationPolicy(.webPush, allowHTTP: true)
            let renamed = try WebPushSubscription(
                endpoint: named, p256dh: Base64URL.encode(subscription.p256dh), auth: Base64URL.encode(subscription.auth), policy: strict)
            let answer = try await provider.deliver(push(renamed), expiration: nil)
            guard case .badRequest(let reason) = answer.outcome else { throw Failure("a refused connection fails, got \(answer)") }
            #expect(reason.contains("loopback") && reason.contains("connect time"))
            #expect(await emulator.messages().isEmpty)
            // Given as an address, it is refused before anything is sent.
            guard case .badRequest(let early) = try await provider.deliver(push(subscription), expiration: nil).outcome else {
                throw Failure("expected a refusal")
            }
            #expect(early.contains("refused now"))
        }
    }

    @Test func eachBodyHasAFreshKeyAndSalt() throws {
        let browser = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { UInt8($0) }
        let subscription = WebPushSubscription(stored: "https://push.example/x", p256dh: Array(browser.publicKey.x963Representation), auth: auth)
        let first = try WebPushEncryption.encrypt(Array("hello".utf8), to: subscription)
        let second = try WebPushEncryption.encrypt(Array("hello".utf8), to: subscription)
        #expect(first.prefix(86) != second.prefix(86))
        #expect(first[21..<86] != second[21..<86])
        #expect(try WebPushEncryption.decrypt(first, browser: browser, auth: auth) == Array("hello".utf8))
        #expect(throws: WebPushEncryption.Failure.self) { try WebPushEncryption.decrypt(first, browser: P256.KeyAgreement.PrivateKey(), auth: auth) }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
