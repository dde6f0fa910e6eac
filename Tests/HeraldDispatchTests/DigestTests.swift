import Foundation
import HeraldCore
import HeraldDispatch
import HeraldEmulator
import HeraldTemplates
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Digests (docs/notifications.md) through a real dispatcher, the real database and the
/// emulator, with the clock moved by closing digests at a chosen instant: what a window gathers
/// goes out as one push in the person's words, what moved on, was read or was shown by the
/// open app leaves first, nothing is sent for an empty one, quiet hours hold it, and however
/// many workers look it is closed once.
@Suite struct DigestTests {
    static let aliceAPNs = "a11ced19e57000000000000000000000000000000000000000000000000000aa"
    static let templates = TemplateCatalog()
    static let deadline = Duration.seconds(3600)

    func person(_ harness: DispatchHarness, _ email: String) async throws -> Person {
        try await harness.store.withTenant(harness.tenant) { try await $0.person(email: email) }
    }

    /// `email` gathers `events` on `app` into their digest.
    func digest(_ harness: DispatchHarness, _ email: String, _ events: [EventKind], app: AppKind) async throws {
        let person = try await person(harness, email)
        try await harness.store.withTenant(harness.tenant) { session in
            for event in events { try await session.setPreference(event, app: app, mode: .digest, for: person, by: person) }
        }
    }

    /// Activities assigned to Chidi and Dana in turn, each started by its assignee.
    func started(_ harness: DispatchHarness, _ names: [String], priority: Priority = .p2) async throws -> [ActivityRecord] {
        var activities: [ActivityRecord] = []
        for (index, name) in names.enumerated() {
            let assignee = index % 2 == 0 ? "chidi@acme.test" : "dana@acme.test"
            let activity = try await harness.assign(to: assignee, priority: priority, name: name)
            try await harness.act(.start, activity.id, by: assignee)
            activities.append(activity)
        }
        return activities
    }

    func close(_ harness: DispatchHarness, at instant: Date) async throws -> [DigestClosing] {
        try await harness.store.closeDueDigests(at: instant, deadline: Self.deadline, templates: Self.templates)
    }

    func data(_ message: RecordedMessage) throws -> [String: Any] {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
        if message.provider == "apns" { return root }
        return try #require((root["message"] as? [String: Any])?["data"] as? [String: Any])
    }

    @Test func aWindowGathersSeveralEventsIntoOnePushInTheirLanguage() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: Self.aliceAPNs, app: .manager, platform: .ios, provider: .apns)
            try await digest(harness, "alice@acme.test", [.activityStarted], app: .manager)
            // Gerd manages a team of his own and reads German.
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.addPerson(email: "gerd@acme.test", name: "Gerd Bauer", locale: "de", timeZone: "Europe/Berlin")
                _ = try await session.createTeam(slug: "bau", name: "Baustelle")
                _ = try await session.setMembership(team: "bau", email: "gerd@acme.test", role: .manager)
                _ = try await session.setMembership(team: "bau", email: "dana@acme.test", role: .member)
            }
            try await harness.register("gerd@acme.test", token: "gerd-manager", app: .manager)
            try await digest(harness, "gerd@acme.test", [.activityStarted], app: .manager)
            // The tenant's backend hears of each item gathered, and of the digest as of any notification.
            let admin = try await person(harness, "root@acme.test")
            _ = try await harness.store.withTenant(harness.tenant) {
                try await $0.createWebhook(
                    viewer: AccessPolicy(admin), url: "https://hooks.acme.test/herald", events: ["notification.*"], description: nil,
                    secret: "whsec_" + Data(repeating: 7, count: 32).base64EncodedString())
            }
            let activities = try await started(harness, ["Replace the pump seal", "Fence repair", "Gate check"])
            for name in ["Gerüst", "Dach"] {
                let activity = try await harness.store.withTenant(harness.tenant) {
                    try await $0.assignActivity(
                        actor: "gerd@acme.test", team: "bau", assignee: "dana@acme.test", name: name, deadline: try Input.date(TestDates.deadline),
                        priority: .p3)
                }
                try await harness.act(.start, activity.id, by: "dana@acme.test")
            }
            _ = try await harness.drain(horizon: .seconds(1))
            // Gathered, not pushed: nothing reached Alice's phone or Gerd's.
            var messages = await harness.emulator.messages()
            #expect(!messages.contains { $0.token == Self.aliceAPNs || $0.token == "gerd-manager" }, "\(messages.map(\.body))")
            let gathered = try await harness.history().filter { $0.event == "activity.started" && $0.recipient.email == "alice@acme.test" }
            #expect(gathered.count == 3 && gathered.allSatisfy { $0.status == "digested" && $0.decision == .digest })
            let digestID = try #require(gathered.first?.digestID)
            #expect(gathered.allSatisfy { $0.digestID == digestID })
            #expect(gathered.allSatisfy { $0.reason?.hasPrefix("digest: gathered into the digest sent at ") == true }, "\(gathered.map(\.reason))")

            // An hour and a bit later (Alice's window is the default hour).
            let closings = try await close(harness, at: Date().addingTimeInterval(3700))
            #expect(closings.count == 2)
            #expect(closings.contains { if case .sent(digestID, _, 3, 0) = $0 { true } else { false } }, "\(closings)")
            _ = try await harness.drain(horizon: .seconds(1))
            messages = await harness.emulator.messages()
            let alices = messages.filter { $0.token == Self.aliceAPNs }
            #expect(alices.count == 1)
            let push = try #require(alices.first)
            #expect(push.title == "Field Ops: 3 updates")
            #expect(push.body == "Chidi Okafor started Replace the pump seal · Dana Scully started Fence repair · and 1 more")
            let root = try data(push)
            #expect(root["type"] as? String == "digest" && root["digestId"] as? String == digestID.lowercasedString)
            #expect(root["count"] as? String == "3")
            #expect(
                Set(((root["notificationIds"] as? String) ?? "").split(separator: ",").map(String.init)) == Set(gathered.map(\.id.lowercasedString)))
            let aps = try #require(root["aps"] as? [String: Any])
            #expect(aps["thread-id"] as? String == activities[0].team.id.lowercasedString)
            #expect(aps["badge"] != nil)
            let gerds = messages.filter { $0.token == "gerd-manager" }
            #expect(gerds.map(\.title) == ["Baustelle: 2 Neuigkeiten"])
            #expect(gerds.map(\.body) == ["Dana Scully hat Gerüst begonnen · Dana Scully hat Dach begonnen"])

            // History: the digest is a notification of its own, sent; each item names it and when.
            let history = try await harness.history()
            let sent = try #require(history.first { $0.event == "digest" && $0.recipient.email == "alice@acme.test" })
            #expect(sent.eventID == digestID && sent.status == "sent" && sent.devicesSent == 1)
            let items = history.filter { $0.digestID == digestID }
            #expect(items.count == 3 && items.allSatisfy { $0.status == "digested" })
            #expect(
                items.allSatisfy {
                    $0.reason?.hasPrefix("digest: in the digest sent at ") == true && $0.reason?.hasSuffix("(UTC) with 2 others") == true
                }, "\(items.map(\.reason))")
            let told = try await harness.store.pool.query(
                "SELECT payload->>'type', payload->'data'->>'notificationId', payload->'data'->>'digestId' FROM live_pending WHERE kind = 'outcome'"
            ).map { try $0.decode((String, String?, String?).self) }
            let digested = told.filter { $0.0 == "notification.digested" && $0.2 == digestID.lowercasedString }
            #expect(digested.count == 3, "\(told)")
            let sentID = sent.id.lowercasedString
            #expect(told.contains { $0.0 == "notification.sent" && $0.1 == sentID }, "\(told)")
            // Closed once: another look finds nothing due.
            #expect(try await close(harness, at: Date().addingTimeInterval(7200)).isEmpty)
        }
    }
}

extension DigestTests {
    /// At 50 items a digest is sent without waiting for its window; the 51st opens the next.
    @Test func fiftyItemsCloseItEarly() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await digest(harness, "alice@acme.test", [.activityStarted], app: .manager)
            _ = try await started(harness, (1...55).map { "Round \($0)" }, priority: .p3)
            // The worker's own look for due digests sends the full one, not an hour later: now.
            // The other waits for its window.
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'open' AND items = 5") == 1)
            let full = try await harness.store.pool.query("SELECT id FROM digests WHERE status = 'sent' AND items = 50").single()
                .decode(UUID.self, at: 0)
            #expect(try await close(harness, at: Date()).isEmpty)
            let pushes = await harness.emulator.messages().filter { $0.token == "alice-manager" }
            #expect(pushes.map(\.title) == ["Field Ops: 50 updates"])
            #expect(pushes.first?.body?.hasSuffix(" · and 48 more") == true)
            #expect(try await harness.history().filter { $0.digestID == full }.count == 50)
        }
    }

    /// Superseded, read, or shown by the open app: each leaves before the digest is sent; a
    /// digest nothing is left in sends nothing.
    @Test func whatMovedOnWasReadOrWasShownLeavesAndAnEmptyDigestSendsNothing() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await harness.register("chidi@acme.test", token: "chidi-member", app: .member)
            try await digest(harness, "alice@acme.test", [.activityStarted], app: .manager)
            try await digest(harness, "chidi@acme.test", [.chatMessage], app: .member)
            // Two started; then the first asks for approval (pushed at once: it asks Alice to act).
            let activities = try await started(harness, ["Moves on", "Stays"])
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.act(.complete, activities[0].id, by: "chidi@acme.test")
            // Three messages to Chidi: he reads the first; the third reaches him while his app is open.
            let (group, sent) = try await harness.store.withTenant(harness.tenant) { session in
                let group = try await session.createConversation(
                    actor: "alice@acme.test", with: ["chidi@acme.test", "dana@acme.test"], name: "Site Team", photoURL: nil, team: nil)
                var sent: [MessageRecord] = []
                for index in 1...2 {
                    sent.append(
                        try await session.sendMessage(
                            actor: "alice@acme.test", conversation: group.id, text: "Line \(index)", clientID: "m\(index)", sentAt: nil
                        ).message)
                }
                return (group, sent)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.changeConversation(actor: "chidi@acme.test", conversation: group.id, .readUpTo(sent[0].sequence))
            }
            let server = UUID()
            try await harness.store.whileLiveServerRuns(server) {
                let chidi = try await person(harness, "chidi@acme.test")
                try await harness.store.withTenant(harness.tenant) { session in
                    try await session.setLiveForeground(true, device: "chidi-member", of: chidi, server: server)
                    _ = try await session.sendMessage(actor: "alice@acme.test", conversation: group.id, text: "Line 3", clientID: "m3", sentAt: nil)
                }
                _ = try await harness.drain(horizon: .seconds(1))
                // (His own history: an admin who is not in the group sees the trace, not the words.)
                let shown = try #require(
                    try await harness.history(as: "chidi@acme.test").first { $0.recipient.email == "chidi@acme.test" && $0.body.contains("Line 3") })
                #expect(shown.status == "suppressed" && shown.decision == .digest && shown.digestID == nil)
                #expect(shown.reason == "digest: left the digest: shown in the open app (a live socket had it in the foreground)")
                // He puts the app away before the window ends.
                try await harness.store.withTenant(harness.tenant) { session in
                    try await session.setLiveForeground(false, device: "chidi-member", of: chidi, server: server)
                }
            }

            let closings = try await close(harness, at: Date().addingTimeInterval(3700))
            #expect(closings.count == 2, "\(closings)")
            _ = try await harness.drain(horizon: .seconds(1))
            let messages = await harness.emulator.messages()
            let alices = messages.filter { $0.token == "alice-manager" }
            // The request for approval at once, and a digest of the one that did not move on.
            #expect(alices.filter { $0.title == "Field Ops: 1 update" }.map(\.body) == ["Dana Scully started Stays"], "\(alices.map(\.title))")
            let history = try await harness.history()
            let left = try #require(
                history.first { $0.activityID == activities[0].id && $0.event == "activity.started" && $0.recipient.email == "alice@acme.test" })
            #expect(
                left.status == "cancelled" && left.reason == "digest: left the digest before it was sent: superseded by activity.completion_requested"
            )
            // Chidi's digest: the message he read left; Line 2 is the one item.
            #expect(messages.filter { $0.token == "chidi-member" }.map(\.body) == ["Alice Moreau: Line 2"])
            let read = try #require(
                try await harness.history(as: "chidi@acme.test").first { $0.recipient.email == "chidi@acme.test" && $0.body.contains("Line 1") })
            #expect(read.status == "cancelled" && read.reason == "digest: left the digest before it was sent: they read the message")

            // A digest whose every item leaves is not sent.
            _ = try await harness.store.withTenant(harness.tenant) { session in
                try await session.sendMessage(actor: "alice@acme.test", conversation: group.id, text: "Line 4", clientID: "m4", sentAt: nil)
            }
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.store.withTenant(harness.tenant) { session in
                _ = try await session.changeConversation(actor: "chidi@acme.test", conversation: group.id, .read)
            }
            let empty = try await close(harness, at: Date().addingTimeInterval(3700))
            #expect(empty.count == 1)
            guard case .empty(_, 1)? = empty.first else {
                Issue.record("\(empty)")
                return
            }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(await harness.emulator.messages().filter { $0.token == "chidi-member" }.count == 1)
        }
    }

    /// Due in quiet hours, a digest waits for their end, and what comes meanwhile joins it.
    @Test func aDigestDueInQuietHoursWaitsForTheirEnd() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await digest(harness, "alice@acme.test", [.activityStarted], app: .manager)
            let alice = try await person(harness, "alice@acme.test")
            // Quiet from one hour from now to three hours from now (Alice's clock is UTC).
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            func clock(_ instant: Date) -> String {
                let parts = calendar.dateComponents([.hour, .minute], from: instant)
                return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
            }
            let now = Date()
            let quietEnd = try #require(calendar.date(bySetting: .second, value: 0, of: now.addingTimeInterval(3 * 3600)))
            try await harness.store.withTenant(harness.tenant) {
                try await $0.setQuietHours(try QuietHours.parse("\(clock(now.addingTimeInterval(3600)))-\(clock(quietEnd))"), for: alice)
            }
            _ = try await started(harness, ["Before the night", "Also before"])
            _ = try await harness.drain(horizon: .seconds(1))
            let waiting = try await close(harness, at: now.addingTimeInterval(3700))
            #expect(waiting.count == 1)
            guard case .waiting(let digestID, let until)? = waiting.first else {
                Issue.record("\(waiting)")
                return
            }
            #expect(abs(until.timeIntervalSince(quietEnd)) < 61, "\(until) \(quietEnd)")
            // Nothing is due during the night; what starts meanwhile joins the same digest.
            #expect(try await close(harness, at: until.addingTimeInterval(-60)).isEmpty)
            _ = try await started(harness, ["In the night"])
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(await harness.emulator.messages().filter { $0.token == "alice-manager" }.isEmpty)
            let closings = try await close(harness, at: until.addingTimeInterval(1))
            #expect(closings.count == 1)
            guard case .sent(digestID, _, 3, 0)? = closings.first else {
                Issue.record("\(closings)")
                return
            }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(await harness.emulator.messages().filter { $0.token == "alice-manager" }.map(\.title) == ["Field Ops: 3 updates"])
        }
    }

    /// A tenant's digest leaves P0 and what asks someone to act immediate; only the person's
    /// own choice gathers an assignment, and nothing gathers P0.
    @Test func p0AndWhatAsksToActAreNeverDigestedByDefault() async throws {
        try await DispatchHarness.with { harness in
            let root = try await person(harness, "root@acme.test")
            try await harness.store.withTenant(harness.tenant) { session in
                for event in [EventKind.activityAssigned, .activityStarted, .activityCompletionRequested, .activityApproved] {
                    try await session.setPreference(event, app: nil, mode: .digest, for: nil, by: root)
                }
            }
            // Each fanned out before the next (a later one would supersede it).
            let routine = try await harness.assign(to: "chidi@acme.test", priority: .p2, name: "Routine")
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.act(.start, routine.id, by: "chidi@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.act(.complete, routine.id, by: "chidi@acme.test")
            let urgent = try await harness.assign(to: "dana@acme.test", priority: .p0, name: "Urgent")
            _ = try await harness.drain(horizon: .seconds(1))
            try await harness.act(.start, urgent.id, by: "dana@acme.test")
            _ = try await harness.drain(horizon: .seconds(1))
            let history = try await harness.history()
            func decision(_ event: String, _ activity: UUID) -> NotificationDecision? {
                history.first { $0.event == event && $0.activityID == activity }?.decision
            }
            // (No devices: what is not gathered is no_device.)
            #expect(decision("activity.assigned", routine.id) == .noDevice)
            #expect(decision("activity.completion_requested", routine.id) == .noDevice)
            #expect(decision("activity.started", routine.id) == .digest)
            #expect(decision("activity.assigned", urgent.id) == .noDevice)
            #expect(decision("activity.started", urgent.id) == .noDevice)
            // Dana's own choice gathers her assignments; a P0 one still goes at once.
            let dana = try await person(harness, "dana@acme.test")
            try await harness.store.withTenant(harness.tenant) {
                try await $0.setPreference(.activityAssigned, app: .member, mode: .digest, for: dana, by: dana)
            }
            let mine = try await harness.assign(to: "dana@acme.test", priority: .p2, name: "Mine")
            let urgentToo = try await harness.assign(to: "dana@acme.test", priority: .p0, name: "Urgent too")
            _ = try await harness.drain(horizon: .seconds(1))
            let after = try await harness.history()
            #expect(after.first { $0.event == "activity.assigned" && $0.activityID == mine.id }?.decision == .digest)
            #expect(after.first { $0.event == "activity.assigned" && $0.activityID == urgentToo.id }?.decision == .noDevice)
        }
    }
}

extension DigestTests {
    /// Holds what the killed worker's backend is, for the test to kill it.
    actor Backend {
        var pid: Int?
        func set(_ pid: Int) { self.pid = pid }
    }

    /// A worker dies holding a due digest (its closing transaction never commits): while it
    /// holds it, nobody else closes it; once it is gone, two dispatchers and six more looks at
    /// once close it, and one push reaches the phone.
    @Test func twoWorkersAndAWorkerKilledMidCloseSendItExactlyOnce() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("alice@acme.test", token: "alice-manager", app: .manager)
            try await digest(harness, "alice@acme.test", [.activityStarted], app: .manager)
            _ = try await started(harness, ["One", "Two", "Three", "Four"])
            _ = try await harness.drain(horizon: .seconds(1))
            let digestID = try await harness.store.pool.query("SELECT id FROM digests WHERE status = 'open'").single().decode(UUID.self, at: 0)

            // A worker that crashes before its commit leaves nothing behind.
            struct Crash: Error {}
            await #expect(throws: Crash.self) {
                try await harness.store.withTenant(harness.tenant) { session in
                    let closing = try await session.closeDigest(
                        digestID, now: Date().addingTimeInterval(3700), deadline: Self.deadline, templates: Self.templates, email: false,
                        wording: Dispatcher.digestWording)
                    #expect(closing != .notDue)
                    throw Crash()
                }
            }
            #expect(try await harness.count("SELECT count(*)::int FROM notifications WHERE kind = 'digest'") == 0)

            // A worker that holds it (its person's digest lock and the row) and is then killed.
            let backend = Backend()
            let holder = Task {
                try await harness.store.pool.withTransaction { connection in
                    let pid = try await connection.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0)
                    try await connection.query(
                        """
                        SELECT pg_advisory_xact_lock(
                            \(DeliveryQueue.digestLockClass)::int, \(unsafeRaw: DeliveryQueue.digestLockKey(tenant: "d.tenant_id", person: "d.person_id")))
                        FROM digests d WHERE d.id = \(digestID)
                        """)
                    try await connection.query("SELECT id FROM digests WHERE id = \(digestID) FOR UPDATE")
                    await backend.set(pid)
                    try await Task.sleep(for: .seconds(600))
                }
            }
            var pid: Int?
            let deadline = Date().addingTimeInterval(300)
            while pid == nil, Date() < deadline {
                pid = await backend.pid
                if pid == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            let killed = try #require(pid)
            #expect(try await close(harness, at: Date().addingTimeInterval(3700)).isEmpty)
            _ = try await harness.store.pool.query("SELECT pg_terminate_backend(\(killed)::int)")
            holder.cancel()
            _ = await holder.result

            // Due now for every worker's own clock; two dispatchers and six looks race for it.
            _ = try await harness.store.pool.query("UPDATE digests SET closes_at = now() - interval '1 second' WHERE id = \(digestID)")
            let closings = try await withThrowingTaskGroup(of: [DigestClosing].self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        _ = try await harness.drain(horizon: .seconds(1))
                        return []
                    }
                }
                for _ in 0..<6 { group.addTask { try await close(harness, at: Date()) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            _ = try await harness.drain(horizon: .seconds(1))
            #expect(closings.count <= 1, "\(closings)")
            #expect(try await harness.count("SELECT count(*)::int FROM notifications WHERE kind = 'digest'") == 1)
            #expect(try await harness.count("SELECT count(*)::int FROM digests WHERE status = 'sent' AND items = 4") == 1)
            let pushes = await harness.emulator.messages().filter { $0.token == "alice-manager" }
            #expect(pushes.map(\.title) == ["Field Ops: 4 updates"])
        }
    }
}
