import Crypto
import Foundation
import HeraldCore
import Synchronization

/// The emulator's push service (docs/cli.md#the-emulator): it hands out subscriptions as a
/// browser's `pushManager.subscribe()` would (keeping the browser's private key), and takes
/// pushes to them the way RFC 8030, 8291 and 8292 say a push service does: a VAPID token
/// checked against its `k`, the body decrypted with the browser's keys, `TTL`, `Urgency` and
/// `Topic` read. An offline subscription holds what arrives, a newer push with the same
/// `Topic` replacing the one held; an unsubscribed one answers 410.
final class EmulatorWebPush: Sendable {
    struct Subscription {
        let id: String
        /// The browser's ECDH key (raw scalar: the key type is not `Sendable`).
        let privateKey: Data
        let auth: [UInt8]
        /// The `applicationServerKey` the page subscribed with: pushes must be signed by it.
        let serverKey: String?
        var unsubscribed = false
        var online = true
        /// What an offline browser has not received yet, oldest first.
        var held: [RecordedMessage] = []
    }

    /// The limits of what it keeps.
    static let maxSubscriptions = 100_000
    static let maxHeld = 100

    private let subscriptions = Mutex<[String: Subscription]>([:])
    /// `http://127.0.0.1:PORT` of the HTTP/1.1 listener, once it listens: endpoints live there.
    let base = Mutex<String?>(nil)

    /// A new subscription: its endpoint and keys, as the browser gives them to the page.
    func subscribe(serverKey: String?) -> [String: Any]? {
        guard let base = base.withLock({ $0 }) else { return nil }
        let key = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let id = UUID().lowercasedString.replacingOccurrences(of: "-", with: "")
        let stored = subscriptions.withLock { subscriptions -> Bool in
            guard subscriptions.count < Self.maxSubscriptions else { return false }
            subscriptions[id] = Subscription(id: id, privateKey: key.rawRepresentation, auth: auth, serverKey: serverKey)
            return true
        }
        guard stored else { return nil }
        return [
            "endpoint": "\(base)/webpush/\(id)", "expirationTime": NSNull(),
            "keys": ["p256dh": Base64URL.encode(key.publicKey.x963Representation), "auth": Base64URL.encode(auth)]
        ]
    }

    func subscription(_ id: String) -> Subscription? { subscriptions.withLock { $0[id] } }

    /// The browser unsubscribed: pushes to it are answered 410 from now on.
    func unsubscribe(_ id: String) -> Bool {
        subscriptions.withLock { subscriptions in
            guard subscriptions[id] != nil else { return false }
            subscriptions[id]?.unsubscribed = true
            subscriptions[id]?.held = []
            return true
        }
    }

    /// Takes the browser off line (pushes are held) or back on (what was held is handed over).
    /// - Returns: the messages handed over; nil for an unknown subscription.
    func setOnline(_ id: String, _ online: Bool) -> [RecordedMessage]? {
        subscriptions.withLock { subscriptions in
            guard subscriptions[id] != nil else { return nil }
            subscriptions[id]?.online = online
            guard online else { return [] }
            defer { subscriptions[id]?.held = [] }
            return subscriptions[id]?.held ?? []
        }
    }

    /// Keeps `message` for an offline browser, in place of one held with the same topic.
    /// - Returns: false when the browser is on line (the message is delivered now).
    func hold(_ message: RecordedMessage, for id: String, topic: String?) -> Bool {
        subscriptions.withLock { subscriptions in
            guard var subscription = subscriptions[id], !subscription.online else { return false }
            if let topic { subscription.held.removeAll { $0.headers["topic"] == topic } }
            if subscription.held.count >= Self.maxHeld { subscription.held.removeFirst() }
            subscription.held.append(message)
            subscriptions[id] = subscription
            return true
        }
    }
}
