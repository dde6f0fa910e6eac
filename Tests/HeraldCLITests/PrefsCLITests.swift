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
            #expect(shown.contains("activity.started               manager  off   own"), "\(shown)")
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
}
