import Foundation
import HeraldCore
import HeraldEmulator
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// A P0 activity's Live Activity (docs/apps.md), through the emulator: started on the assignee's
/// phone and the manager's, updated on every change, ended on approval; a newer state
/// supersedes one not sent yet.
@Suite struct LiveActivityTests {
    static let chidiStart = "5ca1ab1e000000000000000000000000000000000000000000000000000000c1"
    static let aliceStart = "5ca1ab1e000000000000000000000000000000000000000000000000000000a1"
    static let chidiUpdate = "0bda7e00000000000000000000000000000000000000000000000000000000c1"
    static let aliceUpdate = "0bda7e00000000000000000000000000000000000000000000000000000000a1"

    /// Push-to-start tokens on both phones (and ordinary ones beside them).
    static func registerPhones(_ harness: DispatchHarness) async throws {
        try await harness.store.withTenant(harness.tenant) { session in
            _ = try await session.registerDevice(
                email: "chidi@acme.test", token: chidiStart, app: .member, platform: .ios, provider: .apns, kind: .liveActivity)
            _ = try await session.registerDevice(
                email: "alice@acme.test", token: aliceStart, app: .manager, platform: .ios, provider: .apns, kind: .liveActivity)
        }
        try await harness.register("chidi@acme.test", token: "chidi-android", app: .member)
        try await harness.register("alice@acme.test", token: "alice-android", app: .manager)
    }

    /// What the apps do once their Live Activity runs: upload its update token.
    static func uploadUpdateTokens(_ harness: DispatchHarness, activity: UUID) async throws {
        try await harness.store.withTenant(harness.tenant) { session in
            let chidi = try await session.person(email: "chidi@acme.test")
            let alice = try await session.person(email: "alice@acme.test")
            _ = try await session.keepLiveActivityToken(activity: activity, viewer: chidi, token: chidiUpdate, app: nil)
            _ = try await session.keepLiveActivityToken(activity: activity, viewer: alice, token: aliceUpdate, app: nil)
        }
    }

    /// The Live Activity pushes the emulator received, by token, with their `aps`.
    static func livePushes(_ harness: DispatchHarness) async throws -> [(message: RecordedMessage, aps: [String: Any])] {
        try await harness.emulator.messages().filter { $0.headers["apns-push-type"] == "liveactivity" }.map { message in
            let root = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
            return (message, try #require(root["aps"] as? [String: Any]))
        }
    }

    static func state(_ aps: [String: Any]) -> [String: Any] { aps["content-state"] as? [String: Any] ?? [:] }

    @Test func aP0sLiveActivityStartsOnBothPhonesFollowsEveryChangeAndEndsOnApproval() async throws {
        try await DispatchHarness.with { harness in
            try await Self.registerPhones(harness)
            let activity = try await harness.assign()
            _ = try await harness.drain()

            // Started on both phones, in each app's Live Activity topic, with the attributes and
            // the state the lock screen shows, stale when the deadline ends on Chidi's clock.
            var pushes = try await Self.livePushes(harness)
            #expect(Set(pushes.map(\.message.token)) == [Self.chidiStart, Self.aliceStart])
            var tokyo = Calendar(identifier: .gregorian)
            tokyo.timeZone = try #require(TimeZone(identifier: "Asia/Tokyo"))
            // The start of the day after the deadline, in Tokyo.
            let deadlineDay = try #require(LocalDate(TestDates.deadline))
            let deadlineStart = try #require(
                tokyo.date(from: DateComponents(year: deadlineDay.year, month: deadlineDay.month, day: deadlineDay.day)))
            let deadlineEnd = try #require(tokyo.date(byAdding: .day, value: 1, to: deadlineStart))
            for (message, aps) in pushes {
                let topic = message.token == Self.chidiStart ? "com.example.herald.member" : "com.example.herald.manager"
                #expect(message.headers["apns-topic"] == topic + ".push-type.liveactivity")
                #expect(message.headers["apns-priority"] == "10")
                #expect(aps["event"] as? String == "start" && aps["attributes-type"] as? String == "HeraldActivityAttributes")
                let attributes = try #require(aps["attributes"] as? [String: Any])
                #expect(attributes["activityId"] as? String == activity.id.uuidString.lowercased())
                #expect(attributes["name"] as? String == "Ship v2" && attributes["team"] as? String == "Field Ops")
                #expect(Self.state(aps)["status"] as? String == "assigned" && Self.state(aps)["assignee"] as? String == "Chidi Okafor")
                #expect(Self.state(aps)["deadline"] as? String == TestDates.deadline)
                #expect((aps["stale-date"] as? Int) == Int(deadlineEnd.timeIntervalSince1970))
                #expect(aps["timestamp"] is Int && (aps["alert"] as? [String: Any])?["title"] as? String == "P0: Ship v2")
            }
            // The ordinary pushes went to the ordinary tokens only.
            let alerts = await harness.emulator.messages().filter { $0.headers["apns-push-type"] != "liveactivity" }
            #expect(Set(alerts.map(\.token)) == ["chidi-android"])

            // The apps upload their update tokens; each change updates both.
            try await Self.uploadUpdateTokens(harness, activity: activity.id)
            var expected: [(ActivityAction, String, String)] = [
                (.start, "chidi@acme.test", "running"), (.complete, "chidi@acme.test", "completion_requested"),
                (.reject, "alice@acme.test", "running"), (.complete, "chidi@acme.test", "completion_requested")
            ]
            for (action, actor, status) in expected {
                await harness.emulator.clearMessages()
                try await harness.act(action, activity.id, by: actor)
                _ = try await harness.drain()
                pushes = try await Self.livePushes(harness)
                #expect(Set(pushes.map(\.message.token)) == [Self.chidiUpdate, Self.aliceUpdate], "\(action)")
                for (message, aps) in pushes {
                    #expect(aps["event"] as? String == "update" && Self.state(aps)["status"] as? String == status, "\(action)")
                    #expect(aps["attributes"] == nil && aps["alert"] == nil && message.headers["apns-priority"] == "10")
                    // Waiting for approval since the completion request.
                    #expect((Self.state(aps)["waitingSince"] != nil) == (status == "completion_requested"))
                }
            }
            expected.removeAll()

            // Approved: the Live Activity ends, and leaves the lock screen four hours later.
            await harness.emulator.clearMessages()
            try await harness.act(.approve, activity.id, by: "alice@acme.test")
            _ = try await harness.drain()
            pushes = try await Self.livePushes(harness)
            #expect(Set(pushes.map(\.message.token)) == [Self.chidiUpdate, Self.aliceUpdate])
            for (_, aps) in pushes {
                let timestamp = try #require(aps["timestamp"] as? Int)
                #expect(aps["event"] as? String == "end" && Self.state(aps)["status"] as? String == "approved")
                #expect(aps["dismissal-date"] as? Int == timestamp + 4 * 3600 && aps["stale-date"] == nil)
            }

            // History and why show them, with their content.
            let history = try await harness.history()
            let live = history.filter { $0.event.hasPrefix("liveactivity.") }
            #expect(live.filter { $0.event == "liveactivity.start" }.count == 2)
            #expect(live.filter { $0.event == "liveactivity.update" }.count == 8)
            #expect(live.filter { $0.event == "liveactivity.end" }.count == 2)
            #expect(live.allSatisfy { $0.status == "sent" }, "\(live.map(\.status))")
            let trace = try await harness.store.withTenant(harness.tenant) { try await $0.why(activity: activity.id, viewer: nil) }
            let ended = try #require(trace.last?.recipients.first { $0.notification.event == "liveactivity.end" })
            #expect(ended.liveActivity?.event == .end && ended.deliveries.first?.status == "sent")

            // A day after the end, the workers' upkeep removes the update tokens; the
            // push-to-start tokens stay for the next P0.
            let upkeep = { try await harness.store.withDispatcherPool(size: 1) { try await $0.removeExpiredDevices() } }
            #expect(try await upkeep() == 0)
            try await harness.store.pool.query(
                "UPDATE notifications SET created_at = created_at - interval '25 hours' WHERE kind = 'liveactivity.end'")
            #expect(try await upkeep() == 2)
            let kept = try await harness.store.withTenant(harness.tenant) { try await $0.devices(viewer: AccessPolicy(nil)) }.filter {
                $0.removedAt == nil
            }
            #expect(kept.filter { $0.kind == .liveActivityUpdate }.isEmpty && kept.filter { $0.kind == .liveActivity }.count == 2)
        }
    }

    @Test func aNewerStateSupersedesAnUpdateNotSentYet() async throws {
        // Every send is refused for a minute: what fan-out queues waits for its retry.
        try await DispatchHarness.with(faults: .init(unavailableShare: 1, retryAfterSeconds: 60)) { harness in
            try await Self.registerPhones(harness)
            let activity = try await harness.assign()
            try await Self.uploadUpdateTokens(harness, activity: activity.id)
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(2))
            let waiting = """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                WHERE n.kind = 'liveactivity.update' AND d.status = 'queued'
                """
            #expect(try await harness.count(waiting) == 2)

            // Completion requested before the "running" update went out: it is cancelled.
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(2))
            #expect(try await harness.count(waiting) == 2)
            // (Cancelled by the transition itself; a reminder's update, which is no transition, by
            // fan-out: `DeliveryQueue.newerContentState`.)
            let cancelled = """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                WHERE n.kind = 'liveactivity.update' AND d.status = 'cancelled' AND d.last_error LIKE 'superseded%'
                """
            #expect(try await harness.count(cancelled) == 2)

            // Sent back and completed again before anything is fanned out: the "running" of the
            // rejection is superseded at fan-out and never queued.
            try await harness.act(.reject, activity.id, by: "alice@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            await harness.emulator.setFaults(.init())
            await harness.emulator.clearMessages()
            _ = try await harness.drain()
            let pushes = try await Self.livePushes(harness).filter { $0.message.token == Self.chidiUpdate || $0.message.token == Self.aliceUpdate }
            #expect(pushes.count == 2, "one update per phone: \(pushes.map { Self.state($0.aps) })")
            for (_, aps) in pushes { #expect(Self.state(aps)["status"] as? String == "completion_requested") }
            let history = try await harness.history()
            let rejected = history.filter {
                $0.event == "liveactivity.update" && $0.reason?.contains("superseded by activity.completion_requested") == true
            }
            #expect(rejected.count >= 2, "\(history.filter { $0.event == "liveactivity.update" }.map { ($0.status, $0.reason) })")
            #expect(try await harness.count(waiting) == 0)
            // The starts were never moot: they wait for their retry (Retry-After 60 s) and will
            // start the Live Activity, which the next update brings up to date.
            let starts = """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                WHERE n.kind = 'liveactivity.start' AND d.status = 'queued'
                """
            #expect(try await harness.count(starts) == 2)
        }
    }

    /// A reminder changes no status: its update (priority 5) supersedes the one still queued
    /// through fan-out itself.
    @Test func aRemindersUpdateGoesQuietlyAndSupersedesTheOneNotSentYet() async throws {
        try await DispatchHarness.with(faults: .init(unavailableShare: 1, retryAfterSeconds: 60)) { harness in
            try await Self.registerPhones(harness)
            _ = try await harness.store.withTenant(harness.tenant) { session in
                try await session.setPolicy(try ReminderPolicy.defaults.applying(approvalReminder: "p0=1h"), actor: "root@acme.test")
            }
            let activity = try await harness.assign()
            try await Self.uploadUpdateTokens(harness, activity: activity.id)
            try await harness.act(.start, activity.id, by: "chidi@acme.test")
            try await harness.act(.complete, activity.id, by: "chidi@acme.test")
            let asked = Date()
            _ = try await harness.drain(horizon: .seconds(2))
            let queued = """
                SELECT count(*) FROM deliveries d JOIN notifications n ON n.tenant_id = d.tenant_id AND n.id = d.notification_id
                WHERE n.kind = 'liveactivity.update' AND d.status = 'queued'
                """
            #expect(try await harness.count(queued) == 2, "the completion's update, waiting for its retry")

            let reminder = try await harness.store.fireDueTimers(at: asked.addingTimeInterval(3700))
            #expect(reminder.count == 1)
            await harness.emulator.setFaults(.init())
            await harness.emulator.clearMessages()
            _ = try await harness.drain()
            let cancelled = """
                SELECT count(*) FROM deliveries WHERE status = 'cancelled' AND last_error = '\(DeliveryQueue.newerContentState)'
                """
            #expect(try await harness.count(cancelled) == 2)
            let pushes = try await Self.livePushes(harness).filter { $0.message.token == Self.chidiUpdate || $0.message.token == Self.aliceUpdate }
            #expect(pushes.count == 2, "\(pushes.map(\.aps))")
            for (message, aps) in pushes {
                #expect(message.headers["apns-priority"] == "5" && Self.state(aps)["status"] as? String == "completion_requested")
                #expect(Self.state(aps)["waitingSince"] as? Int != nil)
            }
        }
    }

    /// Only who has a push-to-start token gets a start: here the manager alone; and with
    /// nobody's, a P0 writes no Live Activity push at all.
    @Test func aStartGoesToWhoeverHasAPushToStartToken() async throws {
        try await DispatchHarness.with { harness in
            let quiet = try await harness.assign(name: "Nobody follows it")
            _ = try await harness.drain()
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.registerDevice(
                    email: "alice@acme.test", token: Self.aliceStart, app: .manager, platform: .ios, provider: .apns, kind: .liveActivity)
            }
            let followed = try await harness.assign(name: "Alice follows it")
            _ = try await harness.drain()
            #expect(try await Self.livePushes(harness).map(\.message.token) == [Self.aliceStart])
            let live = try await harness.history().filter { $0.event.hasPrefix("liveactivity.") }
            #expect(live.count == 1 && live.first?.recipient.email == "alice@acme.test" && live.first?.app == .manager)
            let written = try await harness.count(
                "SELECT count(*) FROM notifications WHERE kind LIKE 'liveactivity.%' AND activity_id = '\(quiet.id)'")
            #expect(written == 0 && live.first?.activityID == followed.id)
        }
    }

    @Test func onlyP0ActivitiesAndTheirTwoPeopleHaveOne() async throws {
        try await DispatchHarness.with { harness in
            try await Self.registerPhones(harness)
            let p1 = try await harness.assign(priority: .p1, name: "Routine")
            _ = try await harness.drain()
            #expect(try await Self.livePushes(harness).isEmpty)
            try await harness.store.withTenant(harness.tenant) { session in
                let chidi = try await session.person(email: "chidi@acme.test")
                await #expect(throws: StoreError.self) {
                    _ = try await session.keepLiveActivityToken(activity: p1.id, viewer: chidi, token: Self.chidiUpdate, app: nil)
                }
            }
            let p0 = try await harness.assign()
            try await harness.store.withTenant(harness.tenant) { session in
                // Dana, a member of the team, cannot see it; the admin sees it but has no Live
                // Activity of it; Chidi's is on the member app only.
                let dana = try await session.person(email: "dana@acme.test")
                let root = try await session.person(email: "root@acme.test")
                let chidi = try await session.person(email: "chidi@acme.test")
                for (viewer, code) in [(dana, StoreError.Code.notFound), (root, .forbidden)] {
                    do {
                        _ = try await session.keepLiveActivityToken(activity: p0.id, viewer: viewer, token: Self.aliceUpdate, app: nil)
                        Issue.record("\(viewer.email) kept a token")
                    } catch let error as StoreError {
                        #expect(error.code == code, "\(viewer.email): \(error)")
                    }
                }
                await #expect(throws: StoreError.self) {
                    _ = try await session.keepLiveActivityToken(activity: p0.id, viewer: chidi, token: Self.chidiUpdate, app: .manager)
                }
                // A push-to-start token is an iPhone's, through APNs.
                #expect(throws: InputError.self) {
                    try Input.deviceKind("liveactivity", platform: .android, provider: .fcm, address: .token)
                }
                // The same token again refreshes it.
                let first = try await session.keepLiveActivityToken(activity: p0.id, viewer: chidi, token: Self.chidiUpdate, app: nil)
                let again = try await session.keepLiveActivityToken(activity: p0.id, viewer: chidi, token: Self.chidiUpdate, app: nil)
                #expect(first.created && !again.created && first.0.id == again.0.id && again.0.kind == .liveActivityUpdate)
                #expect(again.0.activityID == p0.id && again.0.app == .member)
            }
        }
    }
}
