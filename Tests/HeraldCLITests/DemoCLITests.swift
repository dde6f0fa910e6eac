import Foundation
import HeraldTestSupport
import Testing

@Suite struct DemoCLITests {
    /// `herald demo` tells the whole story, and its history adds up to it.
    @Test func theDemoTellsTheWholeStory() async throws {
        try await TestDatabase.with { pool, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString])
                #expect(try await cli.run(["db", "migrate"]).status == 0)
                let demo = try await cli.run(["demo"])
                #expect(demo.status == 0, "\(demo.stderr)")
                #expect(demo.stdout.contains("🔻P0🔻") && demo.stdout.contains("Aktivitäts-Update"))
                #expect(demo.stdout.contains("Alice Moreau in Site Team") && demo.stdout.contains("silent"))
                #expect(demo.stdout.contains("UNREGISTERED"))
                // Alice's browser: the decrypted Declarative Web Push notification, and where it leads.
                #expect(demo.stdout.contains("💻 Alice Moreau · manager web app · browser  [badge 1 · high · opens /activities/"), "\(demo.stdout)")
                #expect(!demo.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
                #expect(demo.stdout.contains("herald demo --reset"))
                #expect(demo.stdout.contains("/console") && demo.stdout.split(separator: "\n").last?.contains("hrp_") == true)

                let json = try await cli.run(["history", "--tenant", "demo", "--as", "ada@demo.test", "--json"])
                #expect(json.status == 0, "\(json.stderr)")
                let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
                var byEvent: [String: Int] = [:]
                var byStatus: [String: Int] = [:]
                for entry in entries {
                    byEvent[entry["event"] as? String ?? "", default: 0] += 1
                    byStatus[entry["status"] as? String ?? "", default: 0] += 1
                }
                // Two activities × (assigned, started, 2 × completion_requested, rejected, approved),
                // and Erin's, by email (she has no phone); three chat messages × four recipients
                // each (Erin's by email too); the last one
                // reaches Carol's open app over the live channel, and her phone is not pushed.
                // Three rounds assigned and started: the starts gathered into Alice's digest, one push.
                #expect(
                    byEvent == [
                        "activity.assigned": 6, "activity.started": 5, "activity.completion_requested": 4, "activity.rejected": 2,
                        "activity.approved": 2, "chat.message": 12, "digest": 1,
                        // Bob read the rest on his laptop: his Pixel's badge update.
                        "badge": 1,
                        // Alice left Bob's request unopened: to her again, and to Ada (no phone).
                        "activity.unopened": 2,
                        // The P0's Live Activity on Alice's iPhone: started, updated five times, ended.
                        "liveactivity.start": 1, "liveactivity.update": 5, "liveactivity.end": 1
                    ])
                #expect(byStatus == ["sent": 38, "suppressed": 1, "digested": 3])
                // Erin's assignment, as her mail client shows it.
                #expect(demo.stdout.contains("has assigned you a new activity with deadline"), "\(demo.stdout)")
                #expect(demo.stdout.contains("From: \"Herald\" <herald@herald.test> · To: \"Erin Park\" <erin@demo.test>"), "\(demo.stdout)")
                #expect(demo.stdout.contains("/demo-mail/") && demo.stdout.contains(".eml)"), "\(demo.stdout)")
                #expect(demo.stdout.contains("You have not opened Replace the pump seal (P0, Field Ops), sent 16 minutes ago."), "\(demo.stdout)")
                #expect(
                    demo.stdout.contains("Field Ops: 3 updates\n     Bob Stone started North pump round · Carol Wu started Valve check · and 1 more"))
                #expect(demo.stdout.contains("[Live Activity started]") && demo.stdout.contains("[Live Activity ended]"))
                #expect(demo.stdout.contains("Bob Stone · completion requested") && demo.stdout.contains("leaves the lock screen in 4 h"))
                // What her app shows live is Alice's new message (other phones show that text too,
                // and frames from before it may come first on the socket).
                #expect(Self.shownLive(demo.stdout) == "Pump room is open again. Thanks, everyone!", "\(demo.stdout)")
                #expect(demo.stdout.contains("carol@demo.test — viewing"), "\(demo.stdout)")
                let dead = try await pool.query("SELECT count(*) FROM devices WHERE deactivated_at IS NOT NULL").single().decode(Int.self, at: 0)
                #expect(dead == 1)

                // herald why explains each recipient in one line: Carol's dead Android beside her
                // working phone, Dave's pushes sent without sound.
                let carols = try await pool.query(
                    """
                    SELECT a.id FROM activities a JOIN people p ON p.tenant_id = a.tenant_id AND p.id = a.assignee_id
                    WHERE p.email = 'carol@demo.test' AND a.name = 'Quarterly safety audit'
                    """
                ).single().decode(UUID.self, at: 0)
                let why = try await cli.run(["why", "--activity", carols.uuidString, "--tenant", "demo", "--as", "ada@demo.test"])
                #expect(why.status == 0, "\(why.stderr)")
                let lines = why.stdout.split(separator: "\n")
                #expect(
                    lines.contains {
                        $0.contains("carol@demo.test (member app): sent") && $0.contains("dead_token (") && $0.contains("UNREGISTERED")
                    },
                    "\(why.stdout)")
                #expect(lines.contains { $0.contains("not told — actor") })
                // Bob tapped his P0's push: the demo says so, and why shows it after the delivery.
                #expect(demo.stdout.contains("Bob taps the push on his Pixel"), "\(demo.stdout)")
                #expect(demo.stdout.contains("Alice's history of it: sent · seen "), "\(demo.stdout)")
                // He reads the rest on his laptop: his Pixel's badge falls, silently.
                #expect(demo.stdout.contains("📱 Bob Stone · member app · Android  [badge 0 · a badge update: nothing shown]"), "\(demo.stdout)")
                let pump = try await pool.query("SELECT id FROM activities WHERE name = 'Replace the pump seal'").single().decode(UUID.self, at: 0)
                let bobs = try await cli.run([
                    "why", "--activity", pump.uuidString, "--user", "bob@demo.test", "--tenant", "demo", "--as", "alice@demo.test"
                ])
                #expect(
                    bobs.stdout.split(separator: "\n").contains {
                        $0.contains("bob@demo.test (member app): sent") && $0.contains(" · opened ") && $0.contains(" on android bob-")
                    },
                    "\(bobs.stdout)")
                // An event whose fan-out failed says so, under its own line.
                try await pool.query(
                    """
                    UPDATE outbox SET fan_out_failures = 5, fan_out_error = 'refused by a check constraint', passed_over_at = now()
                    WHERE activity_id = \(carols) AND kind = 'activity.assigned'
                    """)
                let failed = try await cli.run(["why", "--activity", carols.uuidString, "--tenant", "demo", "--as", "ada@demo.test"])
                #expect(
                    failed.stdout.split(separator: "\n").contains {
                        $0.hasPrefix("  fan-out failed 5 times, passed over at ") && $0.hasSuffix(": refused by a check constraint")
                    }, "\(failed.stdout)")
                // What a provider or a database said reaches the terminal with its control
                // characters escaped: no escape sequence runs, no line is forged.
                try await pool.query(
                    """
                    UPDATE outbox SET fan_out_error = E'refused \\x1b]0;owned\\x07\\nforged: sent'
                    WHERE activity_id = \(carols) AND kind = 'activity.assigned'
                    """)
                let hostile = try await cli.run(["why", "--activity", carols.uuidString, "--tenant", "demo", "--as", "ada@demo.test"])
                #expect(!hostile.stdout.contains("\u{1B}") && !hostile.stdout.contains("\u{07}"), "\(hostile.stdout)")
                #expect(
                    hostile.stdout.split(separator: "\n").contains { $0.hasSuffix(": refused \\u{1b}]0;owned\\u{7}\\u{a}forged: sent") },
                    "\(hostile.stdout)")
                #expect(!hostile.stdout.split(separator: "\n").contains { $0.hasPrefix("forged") })
                let muted = try await pool.query(
                    """
                    SELECT o.message_id FROM notifications n JOIN outbox o ON o.tenant_id = n.tenant_id AND o.id = n.event_id
                    JOIN people p ON p.tenant_id = n.tenant_id AND p.id = n.recipient_id
                    WHERE p.email = 'dave@demo.test' AND n.decision = 'muted' LIMIT 1
                    """
                ).single().decode(UUID.self, at: 0)
                let silent = try await cli.run([
                    "why", "--message", muted.uuidString, "--user", "dave@demo.test", "--tenant", "demo", "--as", "ada@demo.test"
                ])
                #expect(silent.status == 0, "\(silent.stderr)")
                #expect(
                    silent.stdout.split(separator: "\n").contains { $0.contains("dave@demo.test (member app): sent silently — muted") },
                    "\(silent.stdout)")
                let missing = try await cli.run(["why", "--message", muted.uuidString, "--tenant", "demo", "--as", "ada@demo.test"])
                #expect(
                    missing.stdout.split(separator: "\n").contains {
                        $0.contains("erin@demo.test (member app): sent — no active device on the member app: by email")
                            && $0.contains("email erin@demo.test: sent")
                    }, "\(missing.stdout)")
                // The demo names the ids it suggests why on, and they work as printed.
                #expect(demo.stdout.contains("herald why --activity \(carols.uuidString.lowercased())"), "\(demo.stdout)")
                let alices = try await pool.query(
                    "SELECT m.id FROM messages m JOIN people p ON p.tenant_id = m.tenant_id AND p.id = m.sender_id WHERE p.email = 'alice@demo.test' AND NOT m.is_system ORDER BY m.seq LIMIT 1"
                ).single().decode(UUID.self, at: 0)
                #expect(demo.stdout.contains("herald why --message \(alices.uuidString.lowercased())"), "\(demo.stdout)")
                // The group's system message notifies nobody, and why says so.
                let system = try await pool.query("SELECT id FROM messages WHERE is_system LIMIT 1").single().decode(UUID.self, at: 0)
                let joined = try await cli.run(["why", "--message", system.uuidString, "--tenant", "demo", "--as", "ada@demo.test"])
                #expect(joined.status == 0 && joined.stdout.contains("a system message"), "\(joined.stdout) \(joined.stderr)")
                let refused = try await cli.run(["why", "--activity", carols.uuidString, "--tenant", "demo", "--as", "bob@demo.test"])
                #expect(refused.status != 0 && refused.stderr.hasPrefix("herald: no activity"), "\(refused.stderr)")

                // The tenant stays; a second run says how to start over, --reset does.
                let again = try await cli.run(["demo"])
                #expect(again.status != 0 && again.stderr.contains("--reset"))
                let reset = try await cli.run(["demo", "--reset"])
                #expect(reset.status == 0, "\(reset.stderr)")
                #expect(Self.shownLive(reset.stdout) == "Pump room is open again. Thanks, everyone!", "\(reset.stdout)")
                let count = try await pool.query("SELECT count(*) FROM notifications").single().decode(Int.self, at: 0)
                #expect(
                    count == 42,
                    "the 24 notifications, Erin's assignment, the P0's 7 Live Activity pushes, the three rounds' 6, Alice's digest, Bob's badge update and the 2 of the unopened request, once"
                )
            }
        }
    }

    /// The text under the demo's "Carol's app, live" line.
    static func shownLive(_ output: String) -> String? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let index = lines.firstIndex(where: { $0.contains("Carol's app, live") }), index + 1 < lines.count else { return nil }
        return lines[index + 1].trimmingCharacters(in: .whitespaces)
    }
}
