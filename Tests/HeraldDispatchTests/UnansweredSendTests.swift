import Foundation
import HeraldCore
import HeraldEmulator
import HeraldHTTP
import Testing

@testable import HeraldPush
@testable import HeraldStore

/// A provider that takes a push and answers too late (docs/notifications.md#delivery): the
/// request left, so the provider may have it. It is sent again once, then recorded as
/// unanswered — not sent again and again for the delivery's whole deadline (a push service
/// answering after 15 s took one chat push six times in 75 s).
@Suite struct UnansweredSendTests {
    /// The emulator answers every send after 1.5 s; the providers wait 0.4 s.
    static let faults = EmulatorConfiguration.Faults(latency: .milliseconds(1_500))

    /// Waits until the emulator has taken `count` sends for `token` (it records each when it
    /// answers, after its latency), and a little longer for a send that should not come.
    func sends(to token: String, _ harness: DispatchHarness, count: Int) async throws -> Int {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline {
            let taken = await harness.emulator.messages().filter { $0.token == token }.count
            if taken >= count { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return await harness.emulator.messages().filter { $0.token == token }.count
    }

    func expectUnanswered(_ harness: DispatchHarness, token: String) async throws {
        _ = try await harness.assign(priority: .p2)
        // Draining sends it, and once more after its backoff; then nothing is due.
        _ = try await harness.drain(horizon: .seconds(1))
        #expect(try await sends(to: token, harness, count: 2) == 2)
        // Nothing is due any more: another drain sends nothing, and the emulator takes no third.
        _ = try await harness.drain(horizon: .milliseconds(500))
        try await Task.sleep(for: .seconds(2))
        #expect(await harness.emulator.messages().filter { $0.token == token }.count == 2)
        let entry = try #require(try await harness.history().first { $0.event == "activity.assigned" })
        #expect(entry.status == "unanswered", "\(entry)")
        let detail = try await harness.store.withTenant(harness.tenant) {
            try await $0.historyDetail(viewer: try await $0.person(email: "root@acme.test"), id: entry.id)
        }
        let delivery = try #require(detail.deliveries.first)
        #expect(delivery.status == "unanswered" && delivery.attemptCount == 2)
        #expect(delivery.attempts.map(\.outcome) == ["unanswered", "unanswered"], "\(delivery.attempts)")
        #expect(delivery.lastError?.contains("sent twice, never answered") == true, "\(delivery.lastError ?? "")")
    }

    @Test(arguments: [("HTTP/1.1 (libcurl)", \Emulator.Endpoints.http1), ("HTTP/2 over TLS (nghttp2)", \.https)])
    func anFCMPushNeverAnsweredIsSentTwiceAtMost(_ wire: String, _ endpoint: KeyPath<Emulator.Endpoints, String> & Sendable) async throws {
        try await DispatchHarness.with(faults: Self.faults, endpoint: endpoint, sendTimeout: .milliseconds(400)) { harness in
            try await harness.register("chidi@acme.test", token: "chidi-slow", app: .member)
            try await expectUnanswered(harness, token: "chidi-slow")
        }
    }

    @Test func aWebPushNeverAnsweredIsSentTwiceAtMost() async throws {
        try await DispatchHarness.with(faults: Self.faults, sendTimeout: .milliseconds(400)) { harness in
            let endpoint = try await WebPushDeliveryTests().subscribeBrowser(harness, "chidi@acme.test", app: .member)
            try await expectUnanswered(harness, token: endpoint)
        }
    }

    /// What never left is not "unanswered": a refused connection is retried as before.
    @Test func aSendThatNeverLeftIsRetriedAsBefore() {
        func isRetry(_ outcome: DeliveryOutcome) -> Bool {
            if case .retry = outcome { return true }
            return false
        }
        let refused = HTTPClientError(kind: .connect, message: "cannot connect")
        #expect(isRetry(DeliveryOutcome.transport(refused, what: "FCM")))
        let lost = HTTPClientError(kind: .timeout, message: "no answer", requestSent: true)
        #expect(DeliveryOutcome.transport(lost, what: "FCM") == .unanswered(reason: "FCM sent no answer: no answer"))
        // The OAuth token's request is not the push: the push never left.
        #expect(isRetry(DeliveryOutcome.transport(lost, what: "the token endpoint", isThePush: false)))
        // A URL that cannot be sent to is never retried.
        let malformed = HTTPClientError(kind: .badURL, message: "URL using bad/illegal format")
        #expect(!isRetry(DeliveryOutcome.transport(malformed, what: "the push service")))
    }
}
