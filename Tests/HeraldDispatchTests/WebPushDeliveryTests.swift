import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A browser's subscription as a device (docs/apps.md#web-push-browsers-and-installed-web-apps): the real dispatcher, the real
/// database and the emulator's push service, which decrypts what the browser would show.
@Suite struct WebPushDeliveryTests {
    /// A browser of `email`'s subscribed at the emulator with the gateway's key, registered for `app`.
    func subscribeBrowser(_ harness: DispatchHarness, _ email: String, app: AppKind) async throws -> String {
        let given = try #require(harness.emulator.subscribeBrowser(applicationServerKey: harness.emulator.webPushKey.publicKey))
        let subscription = try WebPushSubscription(
            endpoint: given.endpoint, p256dh: given.p256dh, auth: given.auth, policy: DestinationPolicy(.webPush, allowHTTP: true, allowPrivate: true)
        )
        let (device, outcome) = try await harness.store.withTenant(harness.tenant) {
            try await $0.registerDevice(
                email: email, token: "", app: app, platform: .web, provider: .webpush, subscription: subscription)
        }
        #expect(outcome == .registered && device.provider == .webpush)
        // Lists show the push service's origin, never the endpoint's path nor the keys.
        #expect(device.tokenPreview == subscription.origin)
        return given.endpoint
    }

    func json(_ payload: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
    }

    @Test func aBrowserShowsTheAssignmentAndHistorySaysItWasSent() async throws {
        try await DispatchHarness.with { harness in
            let endpoint = try await subscribeBrowser(harness, "chidi@acme.test", app: .member)
            let activity = try await harness.assign(priority: .p0)
            _ = try await harness.drain(horizon: .seconds(2))
            let message = try #require(await harness.emulator.messages().first { $0.token == endpoint })
            let body = try json(message.payload)
            let shown = try #require(body["notification"] as? [String: Any])
            #expect(message.title == "Ship v2" || (message.title ?? "").isEmpty == false)
            #expect(shown["navigate"] as? String == "/activities/\(activity.id.lowercasedString)")
            #expect((shown["data"] as? [String: String])?["activityId"] == activity.id.lowercasedString)
            #expect(body["app_badge"] as? Int == 1)
            // P0: high urgency; the activity is its topic; the deadline bounds the TTL.
            #expect(message.headers["urgency"] == "high")
            #expect(message.headers["topic"] == activity.id.lowercasedString.replacingOccurrences(of: "-", with: ""))
            #expect((Int(message.headers["ttl"] ?? "") ?? 0) > 0)
            let entry = try #require(try await harness.history().first { $0.event == "activity.assigned" })
            #expect(entry.status == "sent" && entry.devicesSent == 1, "\(entry)")
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE provider = 'webpush' AND status = 'sent'") == 1)
        }
    }

    @Test func anOfflineBrowserGetsOnlyTheNewestPushAboutAnActivity() async throws {
        try await DispatchHarness.with { harness in
            let endpoint = try await subscribeBrowser(harness, "alice@acme.test", app: .manager)
            harness.emulator.setBrowserOnline(endpoint, false)
            let activity = try await harness.assign(priority: .p2)
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(2))
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(2))
            // Both were sent; the push service kept the newer in place of the older (same Topic).
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE provider = 'webpush' AND status = 'sent'") == 2)
            let held = harness.emulator.heldPushes(endpoint)
            #expect(held.count == 1, "\(held.map(\.title))")
            let newest = try #require(held.first)
            #expect(
                try json(newest.payload)["notification"].flatMap { ($0 as? [String: Any])?["data"] as? [String: String] }?["type"]
                    == "activity_completion_requested")
            harness.emulator.setBrowserOnline(endpoint, true)
            #expect(await harness.emulator.messages().filter { $0.token == endpoint }.count == 1)
        }
    }

    @Test func anUnsubscribedBrowserIsDeactivatedAndAThrottledPushWaitsAsTold() async throws {
        try await DispatchHarness.with { harness in
            let gone = try await subscribeBrowser(harness, "chidi@acme.test", app: .member)
            harness.emulator.unsubscribeBrowser(gone)
            _ = try await harness.assign(priority: .p2)
            _ = try await harness.drain(horizon: .seconds(2))
            let device = try #require(try await harness.store.withTenant(harness.tenant) { try await $0.devices(viewer: AccessPolicy(nil)) }.first)
            #expect(device.state == "deactivated" && device.deactivationReason?.contains("410") == true, "\(device)")
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'dead_token'") == 1)

            _ = try await subscribeBrowser(harness, "chidi@acme.test", app: .member)
            await harness.emulator.setFaults(.init(throttledShare: 1, retryAfterSeconds: 900))
            _ = try await harness.assign(priority: .p2, name: "Second")
            _ = try await harness.drain(horizon: .seconds(2))
            // Queued for the time Retry-After gave, not sooner.
            #expect(
                try await harness.count(
                    "SELECT count(*) FROM deliveries WHERE provider = 'webpush' AND status = 'queued' AND due_at > now() + interval '600 seconds'")
                    == 1)
        }
    }
}
