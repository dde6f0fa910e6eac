import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldStore

/// Escalation by engagement (docs/notifications.md#not-opened): an assignment or a request for
/// approval its person has not opened within the policy's `unopened` interval is pushed to
/// them again and told to those above them, once; reading the item, or the activity moving
/// on, stops it. The clock is the test's (`fireDueTimers(at:)`); the pushes go through a real
/// dispatcher to the emulator.
@Suite struct UnopenedEscalationTests {
    static func setPolicy(_ harness: DispatchHarness, unopened: String) async throws {
        _ = try await harness.store.withTenant(harness.tenant) { session in
            try await session.setPolicy(try ReminderPolicy.defaults.applying(unopened: unopened), actor: "root@acme.test")
        }
    }

    /// Chidi never opens his P0 assignment: after 15 minutes his phone hears it again in his
    /// own words, and Alice, who assigned it, hears he has not opened it; once.
    @Test func anAssignmentNotOpenedIsPushedAgainAndItsManagerIsTold() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            try await Self.setPolicy(harness, unopened: "p0=15m")
            let activity = try await harness.assign(priority: .p0)
            _ = try await harness.drain(horizon: .seconds(1))
            await harness.emulator.clearMessages()

            #expect(try await harness.store.fireDueTimers(at: activity.createdAt.addingTimeInterval(14 * 60)).isEmpty)
            let fired = try await harness.store.fireDueTimers(at: activity.createdAt.addingTimeInterval(16 * 60))
            guard case .fired(.unopened, _)? = fired.first, fired.count == 1 else {
                Issue.record("\(fired)")
                return
            }
            #expect(try await harness.store.fireDueTimers(at: activity.createdAt.addingTimeInterval(60 * 60)).isEmpty)
            _ = try await harness.drain(horizon: .seconds(1))
            let messages = Dictionary(uniqueKeysWithValues: await harness.emulator.messages().map { ($0.token, $0) })
            #expect(messages.keys.sorted() == ["alice-phone", "chidi-phone"])
            #expect(messages["chidi-phone"]?.title == "Not Opened Yet")
            #expect(messages["chidi-phone"]?.body?.contains("You have not opened Ship v2 (P0, ") == true)
            #expect(messages["alice-phone"]?.title == "Not Opened by Chidi Okafor")
            #expect(messages["alice-phone"]?.body?.hasSuffix("sent 16 minutes ago.") == true)
            let told = try await harness.history(.init(event: "activity.unopened", limit: 100))
            #expect(told.map(\.recipient.email).sorted() == ["alice@acme.test", "chidi@acme.test"])
        }
    }

    /// A worker far behind: the timer comes due before the assignment was fanned out, so it
    /// waits for it rather than deciding that nobody was told.
    @Test func aTimerDueBeforeItsItemIsWrittenWaitsForIt() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            try await Self.setPolicy(harness, unopened: "p0=15m")
            let activity = try await harness.assign(priority: .p0)
            let early = try await harness.store.fireDueTimers(at: activity.createdAt.addingTimeInterval(16 * 60))
            #expect(early == [.postponed(.unopened)])
            _ = try await harness.drain(horizon: .seconds(1))
            let fired = try await harness.store.fireDueTimers(at: activity.createdAt.addingTimeInterval(17 * 60))
            guard case .fired(.unopened, _)? = fired.first, fired.count == 1 else {
                Issue.record("\(fired)")
                return
            }
        }
    }

    /// A request for approval: read in time, nothing happens (and `why` can say so); left
    /// unread on the next activity, the manager hears it again and the admins are told. The
    /// assignments' waits ended when the work started.
    @Test func aReadItemStopsItAndAnUnreadRequestReachesTheAdmins() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-phone", app: .manager)
            try await harness.register("root@acme.test", token: "root-phone", app: .manager)
            try await Self.setPolicy(harness, unopened: "p1=1h")
            var asked: [UUID: Date] = [:]
            var activities: [ActivityRecord] = []
            for name in ["Read in time", "Left unread"] {
                let activity = try await harness.assign(priority: .p1, name: name)
                try await harness.act(.start, activity.id, by: "chidi@acme.test")
                try await harness.act(.complete, activity.id, by: "chidi@acme.test")
                asked[activity.id] = Date()
                activities.append(activity)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            await harness.emulator.clearMessages()
            let requests = try await harness.history(.init(event: "activity.completion_requested", limit: 100))
            let item = try #require(requests.first { $0.activityID == activities[0].id })
            try await harness.store.withTenant(harness.tenant) { session in
                let alice = try await session.person(email: "alice@acme.test")
                _ = try await session.markInbox(of: alice.id, .read, .ids([item.id]), device: nil)
            }

            let due = (asked.values.max() ?? Date()).addingTimeInterval(3700)
            let firings = try await harness.store.fireDueTimers(at: due)
            #expect(firings.count == 2)
            #expect(firings.contains { if case .fired(.unopened, _) = $0 { true } else { false } })
            #expect(
                firings.contains {
                    if case .skipped(.unopened, let reason) = $0 { reason.hasPrefix("the item was read at ") } else { false }
                })
            _ = try await harness.drain(horizon: .seconds(1))
            // Alice's read sent her phone a silent badge update; the rest are alerts.
            let messages = await harness.emulator.messages().filter { $0.title != nil }
            #expect(messages.map(\.token).sorted() == ["alice-phone", "root-phone"])
            #expect(messages.allSatisfy { $0.body?.contains("Left unread") == true })
            #expect(messages.first { $0.token == "root-phone" }?.title == "Not Opened by Alice Moreau")

            for activity in activities {
                let timers = try await harness.store.withTenant(harness.tenant) { try await $0.timers(activity: activity.id) }
                let unopened = timers.filter { $0.kind == .unopened }
                #expect(unopened.first?.status == .cancelled && unopened.first?.reason == "the activity moved on (activity.started)")
                #expect(unopened.count == 2)
            }
        }
    }
}
