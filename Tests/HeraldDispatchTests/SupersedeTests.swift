import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A push about a state the activity has left is not sent: moving it on cancels what no
/// provider has taken yet, and history says why.
@Suite struct SupersedeTests {
    @Test func aRetryingPushIsCancelledWhenTheActivityMovesOnAndNeverSent() async throws {
        // Every send is refused for a minute: the assignment waits for its retry.
        try await DispatchHarness.with(faults: .init(unavailableShare: 1, retryAfterSeconds: 60)) { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            let activity = try await harness.assign()
            var counters = try await harness.drain(horizon: .seconds(2))
            #expect(counters.retried == 1)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued'") == 1)

            // Chidi starts it before the retry is due: the assignment push is moot.
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            await harness.emulator.setFaults(.init())
            await harness.emulator.clearMessages()
            counters = try await harness.drain(horizon: .seconds(2))
            let messages = await harness.emulator.messages()
            #expect(messages.map(\.token) == ["alice-phone"], "only activity.started, to Alice: \(messages.map(\.token))")

            let history = try await harness.history()
            let assigned = try #require(history.first { $0.event == "activity.assigned" })
            #expect(assigned.status == "cancelled" && assigned.reason?.contains("superseded by activity.started") == true, "\(assigned)")
            #expect(history.first { $0.event == "activity.started" }?.status == "sent")
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status IN ('queued', 'sending')") == 0)
            // What was sent stays sent when the activity moves on again.
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            #expect(try await harness.history().first { $0.event == "activity.started" }?.status == "sent")
        }
    }

    @Test func pushesAboutOtherActivitiesAreLeftAlone() async throws {
        try await DispatchHarness.with(faults: .init(unavailableShare: 1, retryAfterSeconds: 60)) { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            let first = try await harness.assign(name: "First")
            _ = try await harness.assign(name: "Second")
            _ = try await harness.drain(horizon: .seconds(2))
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued'") == 2)
            try await harness.act(.start, first.id, by: "chidi@acme.test")
            // The second activity's push still waits for its retry.
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'queued'") == 1)
            #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'cancelled'") == 1)
        }
    }

    /// An activity's pushes replace one another on the phone: APNs gets the activity as
    /// `apns-collapse-id`, Android the same as its `tag`.
    @Test func anActivitysPushesCarryItsIdentityToCollapseOnThePhone() async throws {
        try await DispatchHarness.with { harness in
            let iPhone = "c0ffee00000000000000000000000000000000000000000000000000000000aa"
            try await harness.register("chidi@acme.test", token: iPhone, app: .member, platform: .ios, provider: .apns)
            try await harness.register("chidi@acme.test", token: "chidi-pixel", app: .member)
            let activity = try await harness.assign()
            _ = try await harness.drain(horizon: .seconds(2))
            let messages = await harness.emulator.messages()
            let id = activity.id.uuidString.lowercased()
            let apns = try #require(messages.first { $0.token == iPhone })
            #expect(apns.headers["apns-collapse-id"] == id)
            let fcm = try #require(messages.first { $0.token == "chidi-pixel" })
            let android = ((try JSONSerialization.jsonObject(with: Data(fcm.payload.utf8)) as? [String: Any])?["message"] as? [String: Any])?[
                "android"]
            #expect(((android as? [String: Any])?["notification"] as? [String: Any])?["tag"] as? String == id)
        }
    }

    /// The activity moves on before any worker fanned its event out: that event's pushes are
    /// written as cancelled, and only the newer event is sent.
    @Test func anEventNotYetFannedOutIsSupersededByTheNextOne() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            let activity = try await harness.assign()
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(2))
            let messages = await harness.emulator.messages()
            #expect(messages.map(\.token) == ["alice-phone"], "\(messages.map(\.token))")
            let history = try await harness.history()
            let assigned = try #require(history.first { $0.event == "activity.assigned" })
            #expect(assigned.status == "cancelled" && assigned.reason == "superseded by activity.started" && assigned.devices == 0, "\(assigned)")
            #expect(history.first { $0.event == "activity.started" }?.status == "sent")
            // The newest event is not superseded by anything: it went out.
            #expect(try await harness.count("SELECT count(*) FROM notifications WHERE status = 'cancelled'") == 1)
        }
    }
}
