import Foundation
import HeraldPostgres
import HeraldTestSupport
import HeraldTesting
import Testing

/// The workflow through the real binary, on a throwaway database.
@Suite struct WorkflowCLITests {
    /// A migrated test database and a CLI pointed at it, acting in tenant `acme`.
    func withCLI(_ body: (HeraldCLI, PostgresPool) async throws -> Void) async throws {
        try await TestDatabase.with { pool, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString, "HERALD_TENANT": "acme"])
                let migrate = try await cli.run(["db", "migrate"])
                #expect(migrate.status == 0, "\(migrate.stderr)")
                try await body(cli, pool)
            }
        }
    }

    func setUp(_ cli: HeraldCLI) async throws {
        let acme = CLIFixture(teams: [("ops", "Field Ops"), ("sales", "Sales")])
            .adding("alice@acme.test", name: "Alice Moreau", team: "ops", role: "manager")
            .adding("chidi@acme.test", name: "Chidi Okafor", team: "ops", role: "member", timeZone: "Asia/Tokyo", locale: "de")
            .adding("dana@acme.test", name: "Dana Scully", team: "ops", role: "member")
            .adding("erin@acme.test", name: "Erin Hale", team: "sales", role: "manager")
        try await make(acme, with: cli)
    }

    func showJSON(_ cli: HeraldCLI, _ id: String) async throws -> [String: Any] {
        let text = try await ok(cli, ["activity", "show", id, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `--fid` registers an FCM installation id; the list shows it, stale or not; bad input
    /// is one line and writes nothing.
    @Test func aDeviceRegistersByInstallationID() async throws {
        try await withCLI { cli, pool in
            try await setUp(cli)
            let fid = "cX3vT9qLRk2bYw8mN4pZa_"
            let registered = try await ok(
                cli, ["device", "register", "--user", "chidi@acme.test", "--fid", fid, "--app", "member", "--platform", "android"])
            #expect(registered.hasPrefix("registered: fid "), "\(registered)")
            #expect(!registered.contains(fid))
            for arguments in [
                ["--fid", fid, "--token", "chidi-phone-0001"], [], ["--fid", "too-short"], ["--fid", fid, "--provider", "apns"]
            ] {
                let result = try await cli.run(
                    ["device", "register", "--user", "chidi@acme.test", "--app", "member", "--platform", "android"] + arguments)
                #expect(result.status != 0 && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains("fid"), "\(arguments): \(result.stderr)")
            }
            try await pool.query("UPDATE devices SET last_seen_at = now() - interval '61 days'")
            let listed = try await ok(cli, ["device", "list", "--user", "chidi@acme.test"])
            #expect(listed.contains("fid ") && listed.contains("stale"), "\(listed)")
            #expect(try await pool.query("SELECT count(*) FROM devices WHERE kind <> 'email'").single().decode(Int.self, at: 0) == 1)
            _ = try await ok(cli, ["device", "remove", "--fid", fid])
        }
    }

    @Test func aP0ActivityFromAssignmentToApproval() async throws {
        try await withCLI { cli, pool in
            try await setUp(cli)
            let people = try JSONSerialization.jsonObject(with: Data(try await ok(cli, ["user", "list", "--json"]).utf8)) as? [[String: Any]]
            var ids: [String: String] = [:]
            for person in people ?? [] { ids[person["email"] as? String ?? ""] = (person["id"] as? String)?.lowercased() }
            let alice = try #require(ids["alice@acme.test"])
            let chidi = try #require(ids["chidi@acme.test"])

            let id = try await ok(
                cli,
                [
                    "activity", "assign", "--as", "alice@acme.test", "--team", "ops", "--to", "chidi@acme.test",
                    "--name", "Ship v2", "--deadline", TestDates.deadline, "--priority", "p0"
                ])
            #expect(UUID(uuidString: id) != nil, "assign printed \(id)")
            let steps: [([String], String)] = [
                (["activity", "start", id, "--as", "chidi@acme.test"], "running"),
                (["activity", "complete", id, "--as", "chidi@acme.test"], "completion_requested"),
                (["activity", "reject", id, "--as", "alice@acme.test", "--reason", "needs tests"], "running"),
                (["activity", "complete", id, "--as", "chidi@acme.test"], "completion_requested"),
                (["activity", "approve", id, "--as", "alice@acme.test"], "approved")
            ]
            var show = try await showJSON(cli, id)
            #expect((show["activity"] as? [String: Any])?["status"] as? String == "assigned")
            #expect((show["activity"] as? [String: Any])?["priority"] as? String == "p0")
            for (arguments, status) in steps {
                _ = try await ok(cli, arguments)
                show = try await showJSON(cli, id)
                #expect((show["activity"] as? [String: Any])?["status"] as? String == status, "after \(arguments[1])")
            }

            let events = try await pool.query(
                "SELECT kind, recipient_ids, actor_id FROM outbox WHERE activity_id = \(try #require(UUID(uuidString: id))) ORDER BY seq")
            let kinds = try events.map { try $0.decode(String.self, at: 0) }
            #expect(
                kinds == [
                    "activity.assigned", "activity.started", "activity.completion_requested", "activity.rejected",
                    "activity.completion_requested", "activity.approved"
                ])
            let recipients = try events.map { try $0.decode([UUID].self, at: 1).map { $0.uuidString.lowercased() } }
            #expect(recipients == [[chidi], [alice], [alice], [chidi], [alice], [chidi]])
            #expect((show["events"] as? [Any])?.count == 6)
        }
    }

    @Test func refusalsAreOneLineAndWriteNothing() async throws {
        try await withCLI { cli, pool in
            try await setUp(cli)
            let id = try await ok(
                cli,
                [
                    "activity", "assign", "--as", "alice@acme.test", "--team", "ops", "--to", "chidi@acme.test",
                    "--name", "Ship v2", "--deadline", TestDates.deadline
                ])
            _ = try await ok(cli, ["activity", "start", id, "--as", "chidi@acme.test"])
            _ = try await ok(cli, ["tenant", "create", "globex"])
            let before = try await counts(pool)

            let cases: [([String], String)] = [
                (
                    [
                        "activity", "assign", "--as", "dana@acme.test", "--team", "ops", "--to", "chidi@acme.test", "--name", "x", "--deadline",
                        "2026-12-01"
                    ], "only a manager"
                ),
                (["activity", "approve", id, "--as", "erin@acme.test"], "erin@acme.test may not approve"),
                (["activity", "complete", id, "--as", "dana@acme.test"], "only the assignee"),
                (["activity", "approve", id, "--as", "alice@acme.test"], "it is running; from running only complete is allowed"),
                (
                    [
                        "activity", "assign", "--as", "alice@acme.test", "--team", "ops", "--to", "erin@acme.test", "--name", "x", "--deadline",
                        "2026-12-01"
                    ], "not a member of team ops"
                ),
                (["activity", "complete", id, "--as", "chidi@acme.test", "--tenant", "globex"], "no person chidi@acme.test in tenant globex"),
                (["activity", "show", id, "--tenant", "globex"], "no activity"),
                (["activity", "start", id, "--as", "chidi@acme.test", "--tenant", "nope"], "no tenant \"nope\""),
                (
                    [
                        "activity", "assign", "--as", "alice@acme.test", "--team", "nope", "--to", "chidi@acme.test", "--name", "x", "--deadline",
                        "2026-12-01"
                    ], "no team \"nope\""
                ),
                (["activity", "start", id, "--as", "ghost@acme.test"], "no person ghost@acme.test"),
                (["activity", "start", UUID().uuidString, "--as", "chidi@acme.test"], "no activity"),
                (["activity", "start", "not-an-id", "--as", "chidi@acme.test"], "is not an id"),
                (["activity", "start", id], "--as EMAIL or HERALD_ACTOR")
            ]
            for (arguments, needle) in cases {
                let result = try await cli.run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect(result.stderr.split(separator: "\n").count <= 3, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(needle), "\(arguments): \(result.stderr)")
            }
            #expect(try await counts(pool) == before)
        }
    }

    @Test func badInputIsRefusedWithOneLineAndNothingWritten() async throws {
        try await withCLI { cli, pool in
            try await setUp(cli)
            let before = try await counts(pool)
            let assign = ["activity", "assign", "--as", "alice@acme.test", "--team", "ops", "--to", "chidi@acme.test"]
            let cases: [([String], String)] = [
                (assign + ["--name", "", "--deadline", "2026-12-01"], "must not be empty"),
                (assign + ["--name", String(repeating: "x", count: 10_000), "--deadline", "2026-12-01"], "the limit is 200"),
                (assign + ["--name", "bell\u{7}", "--deadline", "2026-12-01"], "control character"),
                (assign + ["--name", "ok", "--deadline", "2026-02-30"], "is not a calendar date"),
                (assign + ["--name", "ok", "--deadline", "next week"], "is not a calendar date"),
                (assign + ["--name", "ok", "--deadline", "2026-12-01", "--priority", "p9"], "unknown priority"),
                (["user", "add", "not-an-email", "--name", "X"], "not a valid email"),
                (["user", "add", "x@acme.test", "--name", "X", "--time-zone", "Mars/Olympus"], "unknown time zone"),
                (["user", "add", "x@acme.test", "--name", "X", "--locale", "klingon"], "locale"),
                (["user", "add", "alice@acme.test", "--name", "Again"], "already a person"),
                (["team", "create", "Bad Slug", "--name", "X"], "lowercase letters"),
                (["team", "add-member", "ops", "dana@acme.test", "--role", "boss"], "role \"boss\" is not one of"),
                (["device", "register", "--user", "chidi@acme.test", "--token", "a b", "--app", "member", "--platform", "ios"], "device token"),
                (["device", "register", "--user", "chidi@acme.test", "--token", "abc", "--app", "watch", "--platform", "ios"], "app \"watch\"")
            ]
            for (arguments, needle) in cases {
                let result = try await cli.run(arguments)
                #expect(result.status != 0, "\(arguments.prefix(6))")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments.prefix(6)): \(result.stderr)")
                #expect(result.stderr.contains(needle), "\(arguments.prefix(6)): \(result.stderr)")
            }
            // Invalid UTF-8 can only arrive through a shell: Swift strings cannot hold it.
            let bytes = try await cli.runShell("exec \"$0\" user add bytes@acme.test --name \"$(printf 'A\\377B')\"")
            #expect(bytes.status != 0)
            #expect(bytes.stderr.contains("not valid UTF-8"), "\(bytes.stderr)")
            #expect(try await counts(pool) == before)
        }
    }

    /// `team remove-member`: one line; the person is no longer listed; again is one clear error.
    @Test func someoneIsTakenOutOfATeam() async throws {
        try await withCLI { cli, _ in
            try await setUp(cli)
            let removed = try await ok(cli, ["team", "remove-member", "ops", "dana@acme.test"])
            #expect(removed.contains("dana@acme.test is no longer in ops (was a member)"), "\(removed)")
            #expect(!(try await ok(cli, ["team", "members", "ops"])).contains("dana@acme.test"))
            let again = try await cli.run(["team", "remove-member", "ops", "dana@acme.test"])
            #expect(
                again.status != 0 && again.stderr.split(separator: "\n").count == 1 && again.stderr.contains("not in team ops"), "\(again.stderr)")
        }
    }

    @Test func devicesShowTruncatedTokens() async throws {
        try await withCLI { cli, _ in
            try await setUp(cli)
            let token = "eXampleFCMtoken-0123456789-abcdefghijklmnop-SECRET"
            let registered = try await ok(
                cli, ["device", "register", "--user", "chidi@acme.test", "--token", token, "--app", "member", "--platform", "ios"])
            #expect(registered.hasPrefix("registered: eXampl…CRET"), "\(registered)")
            let moved = try await ok(
                cli, ["device", "register", "--user", "dana@acme.test", "--token", token, "--app", "member", "--platform", "android"])
            #expect(moved.hasPrefix("moved from chidi@acme.test"))
            for output in [registered, moved, try await ok(cli, ["device", "list"]), try await ok(cli, ["device", "list", "--json"])] {
                #expect(!output.contains("0123456789-abcdefghijklmnop"), "\(output)")
            }
            #expect(try await ok(cli, ["device", "remove", "--token", token]).contains("removed"))
            let list = try await ok(cli, ["device", "list", "--user", "dana@acme.test"])
            #expect(list.contains("removed"))
        }
    }

    func counts(_ pool: PostgresPool) async throws -> [Int] {
        var counts: [Int] = []
        for table in ["tenants", "people", "teams", "team_members", "devices", "activities", "activity_transitions", "outbox"] {
            counts.append(try await pool.query("SELECT count(*) FROM \(identifier: table)").single().decode(Int.self, at: 0))
        }
        return counts
    }
}
