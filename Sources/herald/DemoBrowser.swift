import Foundation
import HeraldCore
import HeraldEmulator
import HeraldStore

extension DemoStory {
    /// Alice's laptop: the manager web app asks the browser for a subscription with the server's
    /// key (what `GET /v1/webpush/key` answers) and registers it, as the README's page does.
    mutating func subscribeAlicesBrowser() async throws {
        guard let given = emulator.subscribeBrowser(applicationServerKey: emulator.webPushKey.publicKey) else {
            throw UserFacingMessage("the emulator's push service is not listening")
        }
        // The emulator's push service is on loopback, over plain HTTP: allowed here only.
        let subscription = try WebPushSubscription(
            endpoint: given.endpoint, p256dh: given.p256dh, auth: given.auth, policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true)
        )
        try await store.withTenant(tenant) { session in
            _ = try await session.registerDevice(
                email: "alice@demo.test", token: given.endpoint, app: .manager, platform: .web, provider: .webpush, subscription: subscription)
        }
        browser = given.endpoint
    }

    /// A Web Push message as Alice's browser shows it, decrypted by the push service: the
    /// Declarative Web Push notification, its badge, and where a click leads.
    func describeBrowser(_ message: RecordedMessage) -> String {
        let body = (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) as? [String: Any]
        let shown = body?["notification"] as? [String: Any] ?? [:]
        let badge = body?["app_badge"] as? Int ?? 0
        let navigate = shown["navigate"] as? String ?? "/"
        let urgency = message.headers["urgency"] ?? "normal"
        return "  💻 Alice Moreau · manager web app · browser  " + style.dim("[badge \(badge) · \(urgency) · opens \(TerminalText.escaped(navigate))]")
            + "\n     " + style.bold(shown["title"] as? String ?? "") + "\n     "
            + TerminalText.escaped(shown["body"] as? String ?? "")
    }
}
