import Crypto
import Foundation
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import HeraldTesting
import Testing

/// The dispatcher through the real binary, a real PostgreSQL and the emulator.
@Suite struct DispatchCLITests {
    /// A migrated database, a running emulator, and a CLI configured for both (FCM and APNs).
    func withSetup(_ body: @Sendable (HeraldCLI, PostgresPool, Emulator) async throws -> Void) async throws {
        try await withEmulatorCLI(body)
    }

    func setUpPeople(_ cli: HeraldCLI) async throws {
        let acme = CLIFixture(teams: [("ops", "Field Ops")])
            .adding("alice@acme.test", name: "Alice Moreau", team: "ops", role: "manager")
            .adding("chidi@acme.test", name: "Chidi Okafor", team: "ops", role: "member", timeZone: "Asia/Tokyo")
            .adding(admin: "root@acme.test", name: "Ada Admin")
        try await make(acme, with: cli)
    }

    /// A worker says at start which providers can send: with none, a warning names what is
    /// missing (before, the first sign was a critical line when a push arrived); with some,
    /// nothing above info.
    @Test func aWorkerSaysAtStartWhichProvidersAreConfigured() async throws {
        try await withSetup { cli, _, _ in
            try await setUpPeople(cli)
            var bare = cli
            bare.environment["GOOGLE_APPLICATION_CREDENTIALS"] = ""
            bare.environment["HERALD_APNS_KEY_FILE"] = ""
            let unconfigured = try await bare.run(["dispatch", "--drain"])
            #expect(unconfigured.status == 0, "\(unconfigured.stderr)")
            #expect(unconfigured.stderr.contains("no push provider is configured"), "\(unconfigured.stderr)")
            #expect(unconfigured.stderr.contains("GOOGLE_APPLICATION_CREDENTIALS") && unconfigured.stderr.contains("HERALD_APNS_KEY_FILE"))
            let configured = try await cli.run(["dispatch", "--drain"])
            #expect(configured.status == 0 && !configured.stderr.contains("provider"), "\(configured.stderr)")
        }
    }

    /// Before its event is fanned out, `why` says it is queued and whom it will consider
    /// (it said "no recipient you may see").
    @Test func whyBeforeTheFanOutSaysTheEventIsQueued() async throws {
        try await withSetup { cli, _, _ in
            try await setUpPeople(cli)
            let id = try await ok(
                cli,
                [
                    "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", "Ship",
                    "--deadline", TestDates.deadline, "--as", "alice@acme.test"
                ])
            let waiting = try await ok(cli, ["why", "--activity", id, "--as", "alice@acme.test"])
            #expect(waiting.contains("queued since") && waiting.contains("will consider chidi@acme.test"), "\(waiting)")
            #expect(!waiting.contains("no recipient you may see"))
            let drained = try await cli.run(["dispatch", "--drain"])
            #expect(drained.status == 0, "\(drained.stderr)")
            let done = try await ok(cli, ["why", "--activity", id, "--as", "alice@acme.test"])
            #expect(!done.contains("queued since") && done.contains("chidi@acme.test (member app)"), "\(done)")
        }
    }

    /// The workflow's P0 story: every step's notification reaches exactly the right phone,
    /// in the right app, with the right words, dates, data, thread and badge.
    @Test func theP0StoryReachesTheRightPhones() async throws {
        try await withSetup { cli, _, emulator in
            try await setUpPeople(cli)
            try await ok(
                cli,
                ["device", "register", "--user", "chidi@acme.test", "--token", "chidi-android-member", "--app", "member", "--platform", "android"])
            try await ok(
                cli,
                [
                    "device", "register", "--user", "alice@acme.test", "--token", "a11ce0aa0000000000000000000000000000000000000000000000000000fade",
                    "--app", "manager", "--platform", "ios", "--provider", "apns"
                ])
            // Alice's member-app phone must never hear manager events.
            try await ok(
                cli,
                ["device", "register", "--user", "alice@acme.test", "--token", "alice-android-member", "--app", "member", "--platform", "android"])

            let id = try await ok(
                cli,
                [
                    "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", "Tom & Jerry <3 audit",
                    "--deadline", TestDates.deadline, "--priority", "p0", "--as", "alice@acme.test"
                ])
            var expected: [(token: String, provider: String, status: String, badge: Int, body: String)] = []
            func step(_ arguments: [String], token: String, provider: String, status: String, badge: Int, body: String) async throws {
                if !arguments.isEmpty { try await ok(cli, arguments + [id]) }
                let drained = try await cli.run(["dispatch", "--drain", "--json"])
                #expect(drained.status == 0, "\(drained.stderr)")
                expected.append((token, provider, status, badge, body))
            }
            // The badge is the person's unread inbox items with this one (docs/inbox.md): nobody
            // reads here, so each push counts one more of its recipient's.
            let tokyo = Self.today(in: "Asia/Tokyo")
            let utc = Self.today(in: "UTC")
            try await step(
                [], token: "chidi-android-member", provider: "fcm", status: "assigned", badge: 1,
                body: "🔻P0🔻\(tokyo) - Alice Moreau has assigned you a new activity with deadline \(TestDates.deadlineShown): Tom & Jerry <3 audit.")
            try await step(
                ["activity", "start", "--as", "chidi@acme.test"], token: "a11ce0aa0000000000000000000000000000000000000000000000000000fade",
                provider: "apns", status: "running", badge: 1,
                body: "🔻P0🔻\(utc) - Chidi Okafor has started activity with deadline \(TestDates.deadlineShown) for Tom & Jerry <3 audit.")
            try await step(
                ["activity", "complete", "--as", "chidi@acme.test"], token: "a11ce0aa0000000000000000000000000000000000000000000000000000fade",
                provider: "apns",
                status: "completion_requested", badge: 2,
                body: "🔻P0🔻\(utc) - Chidi Okafor has completed activity with deadline \(TestDates.deadlineShown) for Tom & Jerry <3 audit.")
            try await step(
                ["activity", "reject", "--reason", "redo", "--as", "alice@acme.test"], token: "chidi-android-member", provider: "fcm",
                status: "running", badge: 2, body: "🔻P0🔻\(tokyo) - Alice Moreau has sent back your activity: Tom & Jerry <3 audit.")
            try await step(
                ["activity", "complete", "--as", "chidi@acme.test"], token: "a11ce0aa0000000000000000000000000000000000000000000000000000fade",
                provider: "apns",
                status: "completion_requested", badge: 3,
                body: "🔻P0🔻\(utc) - Chidi Okafor has completed activity with deadline \(TestDates.deadlineShown) for Tom & Jerry <3 audit.")
            try await step(
                ["activity", "approve", "--as", "alice@acme.test"], token: "chidi-android-member", provider: "fcm", status: "approved",
                badge: 3, body: "🔻P0🔻\(tokyo) - Alice Moreau has approved your activity: Tom & Jerry <3 audit.")

            let messages = await emulator.messages()
            #expect(messages.count == expected.count)
            for (message, want) in zip(messages, expected) {
                #expect(message.token == want.token)
                #expect(message.provider == want.provider)
                #expect(message.title == "Activity Update")
                #expect(message.body == want.body)
                let payload = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
                if want.provider == "fcm" {
                    let body = try #require(payload["message"] as? [String: Any])
                    let data = try #require(body["data"] as? [String: String])
                    #expect(data["activityId"] == id && data["priority"] == "p0" && data["status"] == want.status)
                    #expect(data["type"]?.hasPrefix("activity_") == true && data["teamId"] != nil)
                    #expect(data["notificationId"].flatMap(UUID.init(uuidString:)) != nil, "the push names its notification")
                    let aps = (((body["apns"] as? [String: Any])?["payload"] as? [String: Any])?["aps"] as? [String: Any])
                    #expect(aps?["thread-id"] as? String == id)
                    #expect(aps?["badge"] as? Int == want.badge)
                    let android = (body["android"] as? [String: Any])?["notification"] as? [String: Any]
                    #expect(android?["tag"] as? String == id)
                    #expect(android?["notification_count"] as? Int == want.badge)
                } else {
                    #expect(message.headers["apns-topic"] == "com.example.herald.manager")
                    let aps = try #require(payload["aps"] as? [String: Any])
                    #expect(aps["thread-id"] as? String == id)
                    #expect(aps["badge"] as? Int == want.badge)
                    #expect(payload["activityId"] as? String == id && payload["status"] as? String == want.status)
                }
            }
            #expect(!messages.contains { $0.token == "alice-android-member" })

            // History shows each one as sent; the table and a notification's details read well.
            let json = try await ok(cli, ["history", "--as", "root@acme.test", "--json"])
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            #expect(entries.count == 6)
            #expect(entries.allSatisfy { $0["status"] as? String == "sent" })
            let table = try await ok(cli, ["history", "--as", "alice@acme.test", "--event", "activity.completion_requested"])
            #expect(table.split(separator: "\n").count == 3 && table.contains("sent") && table.contains("1/1"))
            let first = try #require(entries.last?["id"] as? String)
            let shown = try await ok(cli, ["history", "show", first, "--as", "chidi@acme.test"])
            #expect(shown.contains("delivered") && shown.contains("200") && !shown.contains("chidi-android-member"))
            let stats = try await ok(cli, ["stats", "--json"])
            #expect(stats.contains("\"sent\" : 6"))
            // A member may not read another's history entry.
            let alices = try #require(entries.first { ($0["recipient"] as? [String: Any])?["email"] as? String == "alice@acme.test" })
            let refused = try await cli.run(["history", "show", try #require(alices["id"] as? String), "--as", "chidi@acme.test"])
            #expect(refused.status != 0 && refused.stderr.hasPrefix("herald: no notification"))
        }
    }

    /// A worker runs until SIGTERM, delivers what arrives meanwhile (woken by NOTIFY), and
    /// then exits 0 with nothing left claimed.
    @Test func aWorkerDeliversUntilSIGTERM() async throws {
        try await withSetup { cli, pool, emulator in
            try await setUpPeople(cli)
            try await ok(
                cli, ["device", "register", "--user", "chidi@acme.test", "--token", "chidi-phone-sigterm", "--app", "member", "--platform", "android"]
            )
            let worker = try cli.launch(["worker"])
            try await Task.sleep(for: .seconds(1))
            try await ok(
                cli,
                [
                    "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", "Live", "--deadline", TestDates.deadline,
                    "--as", "alice@acme.test"
                ])
            // This checks that it arrives, not how fast: the limit only keeps a broken build from
            // hanging (a loaded machine running the whole suite can take a minute or more).
            let arrived = await eventually { await emulator.messages().count == 1 }
            #expect(arrived, "the worker delivered")
            kill(worker.processIdentifier, SIGTERM)
            await worker.waitForExit()
            #expect(worker.terminationReason == .exit && worker.terminationStatus == 0)
            let held = try await pool.query("SELECT count(*) FROM delivery_leases").single().decode(Int.self, at: 0)
            #expect(held == 0)
        }
    }

    /// `en` dates as the templates print them, for today in `zone`.
    static func today(in zone: String) -> String {
        var style = Date.FormatStyle(date: .abbreviated, time: .omitted, locale: Locale(identifier: "en_US"))
        style.timeZone = TimeZone(identifier: zone) ?? .gmt
        return Date().formatted(style)
    }

    /// A worker killed with SIGKILL five times in the middle of 10,000 deliveries loses
    /// nothing: after a final drain every delivery is sent. The duplicates the emulator saw
    /// are reported, and each is one Herald accounts for (docs/notifications.md#delivery):
    /// what was in flight at a kill (at most `concurrency` each), a send that got no answer in
    /// time (on a loaded machine the emulator, in this process, can take longer than the send
    /// timeout), or one whose lease had passed to another worker before it was acknowledged.
    @Test func aWorkerKilledFiveTimesLosesNothing() async throws {
        try await LoadTests.oneAtATime {
            try await withSetup { cli, pool, emulator in
                try await setUpPeople(cli)
                try await pool.query(
                    """
                    INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
                    SELECT p.tenant_id, gen_random_uuid(), p.id, 'crash-' || g, 'member', 'android', 'fcm'
                    FROM people p, generate_series(1, 10000) g WHERE p.email = 'chidi@acme.test'
                    """)
                try await ok(
                    cli,
                    [
                        "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", "Crash test", "--deadline", TestDates.deadline,
                        "--as", "alice@acme.test"
                    ])
                let concurrency = 100
                var kills = 0
                var sentAtKills: [Int] = []
                func sent() async throws -> Int {
                    try await pool.query("SELECT count(*) FROM deliveries WHERE status = 'sent'").single().decode(Int.self, at: 0)
                }
                for round in 1...5 {
                    let worker = try cli.launch(["worker", "--lease", "2s", "--concurrency", "\(concurrency)"])
                    // Kill it in the middle of the work: once it has sent its share, at a random moment.
                    let deadline = Date().addingTimeInterval(300)
                    while try await sent() < round * 1_500, Date() < deadline, worker.isRunning {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...300)))
                    if worker.isRunning {
                        kill(worker.processIdentifier, SIGKILL)
                        kills += 1
                        sentAtKills.append(try await sent())
                    }
                    await worker.waitForExit()
                }
                #expect(kills == 5)
                #expect(sentAtKills.last ?? 0 < 10_000, "every kill came while work was left")
                let drained = try await cli.run(["dispatch", "--drain", "--wait", "5s", "--lease", "2s", "--json"])
                #expect(drained.status == 0, "\(drained.stderr)")
                let counts = try await pool.query(
                    "SELECT count(*) FILTER (WHERE status = 'sent'), count(*) FROM deliveries"
                ).single().decode((Int, Int).self)
                #expect(counts == (10_000, 10_000))
                let tokens = await emulator.messages().map(\.token)
                let unique = Set(tokens).count
                let duplicates = tokens.count - unique
                #expect(unique == 10_000)
                // What was in flight at each kill, and the sends Herald recorded as possibly taken
                // twice: unanswered, or acknowledged after the lease passed on (not counted).
                let (unanswered, late) = try await pool.query(
                    """
                    SELECT (SELECT coalesce(sum(unanswered), 0)::int FROM deliveries),
                           (SELECT count(*)::int FROM delivery_attempts WHERE NOT counted)
                    """
                ).single().decode((Int, Int).self)
                #expect(
                    duplicates <= kills * concurrency + unanswered + late,
                    "duplicates: \(duplicates), \(unanswered) sends unanswered, \(late) acknowledged late")
                print(
                    "crash safety: \(kills) SIGKILLs with \(sentAtKills) sent, then a drain; the emulator received \(duplicates) duplicates of 10000 (\(unanswered) sends unanswered, \(late) acknowledged late)"
                )
            }
        }
    }
}
