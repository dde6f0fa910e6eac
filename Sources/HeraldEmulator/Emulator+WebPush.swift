import Foundation
import HeraldCore

extension Emulator {
    /// A browser's new subscription to this emulator's push service, as `pushManager.subscribe()`
    /// returns it: its endpoint and keys (the emulator keeps the private key, and decrypts what
    /// is pushed to it). Nil until the emulator listens.
    /// - Parameter applicationServerKey: the server key the page subscribed with; pushes signed
    ///   by another are refused (403), as push services do.
    public func subscribeBrowser(applicationServerKey: String? = nil) -> (endpoint: String, p256dh: String, auth: String)? {
        guard let made = webPush.subscribe(serverKey: applicationServerKey), let endpoint = made["endpoint"] as? String,
            let keys = made["keys"] as? [String: String], let p256dh = keys["p256dh"], let auth = keys["auth"]
        else { return nil }
        return (endpoint, p256dh, auth)
    }

    /// The browser unsubscribes: pushes to `endpoint` are answered 410 from now on.
    public func unsubscribeBrowser(_ endpoint: String) { _ = webPush.unsubscribe(Self.subscriptionID(endpoint)) }

    /// Takes the browser off line (its pushes are held, a newer one with the same `Topic`
    /// replacing the one held) or back on (what was held is recorded as received).
    public func setBrowserOnline(_ endpoint: String, _ online: Bool) {
        for message in webPush.setOnline(Self.subscriptionID(endpoint), online) ?? [] { state.record(message) }
    }

    /// What an offline browser has waiting at the push service, oldest first.
    public func heldPushes(_ endpoint: String) -> [RecordedMessage] { webPush.subscription(Self.subscriptionID(endpoint))?.held ?? [] }

    private static func subscriptionID(_ endpoint: String) -> String { String(endpoint.split(separator: "/").last ?? "") }
}
