import Foundation
import HeraldEmulator
import HeraldTestSupport
import HeraldTesting
import Testing

/// Preferences through the real binary, a worker and the emulator (docs/notifications.md).
@Suite struct PrefsCLITests {
    /// Alice turns activity.started off: a P2 start reaches nobody and history says
    /// preference_off; a P0 start still arrives.
    @Test func anEventTurnedOffReachesNobodyButP0Does() async throws {
        try await withEmulatorCLI { cli, _, emulator in
            try await addAcmeOps(cli)
            try await ok(
                cli, ["device", "register", "--user", "alice@acme.test", "--token", "alice-manager", "--app", "manager", "--platform", "android"])
            let shown = try await ok(cli, ["prefs", "set", "activity.started", "off", "--as", "alice@acme.test"])
            let row = shown.split(separator: "\n").first { $0.hasPrefix("activity.started ") }?.split(separator: " ")
            #expect(row == ["activity.started", "manager", "off", "own", "push"], "\(shown)")
            let refused = try await cli.run(["prefs", "set", "activity.started", "off", "--app", "member", "--as", "alice@acme.test"])
            #expect(refused.status != 0 && refused.stderr == "herald: activity.started never reaches the member app (only the manager app)\n")

            let worker = try cli.launch(["worker"])
            defer { if worker.isRunning { kill(worker.processIdentifier, SIGTERM) } }
            let deadline = ReminderCLITests.deadline
            var ids: [String] = []
            for (name, priority) in [("Routine", "p2"), ("Urgent", "p0")] {
                let id = try await ok(
                    cli,
                    [
                        "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", name, "--deadline", deadline,
                        "--priority", priority, "--as", "alice@acme.test"
                    ])
                try await ok(cli, ["activity", "start", id, "--as", "chidi@acme.test"])
                ids.append(id)
            }
            // Wait for both decisions: the urgent start at the emulator, the routine one in history.
            var entries: [[String: Any]] = []
            _ = try await eventually(within: .seconds(300)) {
                let history = try await ok(
                    cli, ["history", "--activity", ids[0], "--event", "activity.started", "--as", "alice@acme.test", "--json"])
                entries = try #require(try JSONSerialization.jsonObject(with: Data(history.utf8)) as? [[String: Any]])
                let sent = await emulator.messages()
                return !entries.isEmpty && !sent.isEmpty
            }
            let bodies = await emulator.messages().compactMap(\.body)
            #expect(bodies.count == 1 && bodies.first?.contains("Urgent") == true, "\(bodies)")

            #expect(entries.count == 1)
            #expect(entries.first?["decision"] as? String == "preference_off" && entries.first?["status"] as? String == "suppressed")
            #expect(entries.first?["reason"] as? String == "preference_off: they turned activity.started off on the manager app")
            kill(worker.processIdentifier, SIGTERM)
            await worker.waitForExit()
        }
    }

    /// Chidi wants assignments by email as well as pushed (docs/notifications.md#email): the
    /// channel is set, shown, and a wrong one refused in one line.
    @Test func aChannelIsSetShownAndAWrongOneRefused() async throws {
        try await withEmulatorCLI { cli, _, _ in
            try await addAcmeOps(cli)
            let shown = try await ok(cli, ["prefs", "channel", "activity.assigned", "both", "--as", "chidi@acme.test"])
            let row = shown.split(separator: "\n").first { $0.hasPrefix("activity.assigned ") }?.split(separator: " ")
            #expect(row == ["activity.assigned", "member", "immediate", "default", "both"], "\(shown)")
            let refused = try await cli.run(["prefs", "channel", "activity.assigned", "fax", "--as", "chidi@acme.test"])
            #expect(refused.status != 0 && refused.stderr == "herald: channel \"fax\" is not one of push, push_only, both, email\n")
            let json = try await ok(cli, ["prefs", "show", "--as", "chidi@acme.test", "--json"])
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let entries = try #require(summary["entries"] as? [[String: Any]])
            #expect(entries.first { $0["event"] as? String == "activity.assigned" }?["channel"] as? String == "both")
            #expect(entries.first { $0["event"] as? String == "chat.message" }?["channel"] as? String == "push")
        }
    }

    /// Alice gathers starts into a one-minute digest: the real worker pushes them as one when
    /// the minute ends, and `why` says which digest each went into, and when.
    @Test func aDigestArrivesWhenItsWindowEndsAndWhyNamesIt() async throws {
        try await withEmulatorCLI { cli, _, emulator in
            try await addAcmeOps(cli)
            try await ok(
                cli, ["device", "register", "--user", "alice@acme.test", "--token", "alice-manager", "--app", "manager", "--platform", "android"])
            let set = try await ok(cli, ["prefs", "set", "activity.started", "digest", "--as", "alice@acme.test"])
            let row = set.split(separator: "\n").first { $0.hasPrefix("activity.started ") }?.split(separator: " ")
            #expect(row == ["activity.started", "manager", "digest", "own", "push"], "\(set)")
            let window = try await ok(cli, ["prefs", "digest-window", "1m", "--as", "alice@acme.test"])
            #expect(window.contains("digest window: 1m"), "\(window)")
            let refused = try await cli.run(["prefs", "digest-window", "2h", "--as", "alice@acme.test"])
            #expect(refused.status != 0 && refused.stderr == "herald: the digest window \"2h\" is not one of 1m, 5m, 15m, 1h, 4h or daily HH:MM\n")
            let preview = try await ok(cli, ["template", "preview", "digest"])
            #expect(preview.contains("Field Ops: 7 updates"), "\(preview)")

            let worker = try cli.launch(["worker"])
            defer { if worker.isRunning { kill(worker.processIdentifier, SIGTERM) } }
            var ids: [String] = []
            for name in ["Pump seal", "Fence"] {
                let id = try await ok(
                    cli,
                    [
                        "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", name, "--deadline", ReminderCLITests.deadline,
                        "--priority", "p2", "--as", "alice@acme.test"
                    ])
                try await ok(cli, ["activity", "start", id, "--as", "chidi@acme.test"])
                ids.append(id)
            }
            // The minute's end, on the worker's own clock.
            _ = await eventually(within: .seconds(300)) {
                await emulator.messages().contains { $0.title == "Field Ops: 2 updates" }
            }
            let pushes = await emulator.messages().filter { $0.token == "alice-manager" }
            #expect(pushes.map(\.title) == ["Field Ops: 2 updates"], "\(pushes.map(\.title))")
            #expect(pushes.first?.body == "Chidi Okafor started Pump seal · Chidi Okafor started Fence", "\(pushes.map(\.body))")
            let why = try await ok(cli, ["why", "--activity", ids[0], "--as", "alice@acme.test"])
            let line = why.split(separator: "\n").first { $0.contains("alice@acme.test (manager app)") && $0.contains("digest") }
            #expect(line?.contains("digested — digest: in the digest sent at ") == true, "\(why)")
            #expect(line?.contains("(UTC) with 1 other (digest ") == true, "\(why)")
            kill(worker.processIdentifier, SIGTERM)
            await worker.waitForExit()
        }
    }
}
