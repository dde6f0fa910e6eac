import Foundation
import HeraldEmulator
import HeraldHTTP
import HeraldTestSupport
import HeraldTesting
import Testing

/// `herald worker --metrics`: the real binary, a real HTTP client, and the emulator. After a
/// drain the delivery counters say what history says.
@Suite struct MetricsCLITests {
    @Test func theDeliveryCountersEqualHistoryAfterADrain() async throws {
        try await withEmulatorCLI { cli, pool, emulator in
            try await addAcmeOps(cli)
            // Chidi: an Android phone, an iPhone, and an old phone whose token FCM no longer knows.
            try await ok(
                cli, ["device", "register", "--user", "chidi@acme.test", "--token", "chidi-android", "--app", "member", "--platform", "android"])
            try await ok(
                cli,
                [
                    "device", "register", "--user", "chidi@acme.test", "--token", String(repeating: "c1", count: 32), "--app", "member",
                    "--platform", "ios", "--provider", "apns"
                ])
            try await ok(
                cli, ["device", "register", "--user", "chidi@acme.test", "--token", "dead-chidi-old", "--app", "member", "--platform", "android"])
            try await ok(
                cli, ["device", "register", "--user", "alice@acme.test", "--token", "alice-manager", "--app", "manager", "--platform", "android"])

            var worker = cli
            worker.environment["HERALD_METRICS_TOKEN"] = "scrape-secret-1"
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("herald-worker-\(UUID().uuidString).out")
            defer { try? FileManager.default.removeItem(at: output) }
            let process = try worker.launch(["worker", "--metrics", "127.0.0.1:0"], stdout: output)
            defer { if process.isRunning { kill(process.processIdentifier, SIGTERM) } }
            // Each wait below is for the event it names; its limit only keeps a broken build from
            // hanging the suite (a loaded machine running the whole suite can take a minute or more).
            var base = ""
            _ = await eventually(within: .seconds(300)) {
                base = (try? String(contentsOf: output, encoding: .utf8))?.split(separator: "\n").first.map(String.init) ?? ""
                return !base.isEmpty
            }
            try #require(base.hasPrefix("http://127.0.0.1:"), "the worker printed its metrics address: \(base)")

            let http = try HTTPClient(logger: testLogger)
            defer { http.shutdown() }
            func get(_ path: String, token: String? = nil) async throws -> (Int, String) {
                let headers = token.map { [(name: "authorization", value: "Bearer \($0)")] } ?? []
                let response = try await http.send(HTTPRequest(method: "GET", url: base + path, headers: headers))
                return (response.status, String(decoding: response.body, as: UTF8.self))
            }
            #expect(try await get("/healthz").0 == 200)
            var readiness = (0, "")
            _ = try await eventually(within: .seconds(300)) {
                readiness = try await get("/readyz")
                return readiness.0 == 200
            }
            #expect(readiness.0 == 200, "\(readiness)")
            // Without the token, or with another, nothing is told.
            #expect(try await get("/metrics").0 == 401)
            #expect(try await get("/metrics", token: "scrape-secret-2").0 == 401)

            // One P0 activity: the assignment to each of Chidi's three phones, the start to Alice's.
            // (One event each: a dead token deactivates its device, so a later event would reach
            // it or not depending on which was sent first.) The start waits until the assignment
            // was delivered: a push of it sent again after a timeout (a loaded machine) would
            // otherwise be cancelled by the start, which supersedes it.
            var stats: [String: Int] = [:]
            func settled(_ count: Int) async throws {
                _ = try await eventually(within: .seconds(300)) {
                    let text = try await ok(cli, ["stats", "--tenant", "acme", "--json"])
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                    let tenants = try #require(json["tenants"] as? [[String: Any]])
                    stats = tenants.first?["deliveries"] as? [String: Int] ?? [:]
                    return stats.values.reduce(0, +) == count && stats["queued"] == nil && stats["sending"] == nil
                }
            }
            let id = try await ok(
                cli,
                [
                    "activity", "assign", "--team", "ops", "--to", "chidi@acme.test", "--name", "Alpha",
                    "--deadline", ReminderCLITests.deadline, "--priority", "p0", "--as", "alice@acme.test"
                ])
            try await settled(3)
            try await ok(cli, ["activity", "start", id, "--as", "chidi@acme.test"])
            // Drained: history has an outcome for every delivery, and the worker has recorded them.
            try await settled(4)
            #expect(stats == ["sent": 3, "dead_token": 1], "\(stats)")
            _ = emulator

            // What history says of each delivery: its provider, its outcome, and how many times
            // it was sent. (On a loaded machine a send may wait past its timeout and be sent
            // again: history counts that attempt, and so must the counters.)
            let deliveries = try await pool.query("SELECT provider, status, count(*)::int, sum(attempts)::int FROM deliveries GROUP BY 1, 2")
                .map { try $0.decode((String, String, Int, Int).self) }
            let attemptsBy = { (provider: String) in deliveries.filter { $0.0 == provider }.reduce(0) { $0 + $1.3 } }
            // The series take a moment to follow the last acknowledgement (written in batches).
            var series: [String: Double] = [:]
            _ = try await eventually(within: .seconds(300)) {
                let (status, text) = try await get("/metrics", token: "scrape-secret-1")
                #expect(status == 200)
                series = Self.samples(text)
                return Self.sum(series, "herald_deliveries_total") == Double(attemptsBy("fcm") + attemptsBy("apns"))
            }
            #expect(series["herald_deliveries_total{provider=\"fcm\",outcome=\"sent\"}"] == 2, "\(series)")
            #expect(series["herald_deliveries_total{provider=\"apns\",outcome=\"sent\"}"] == 1)
            #expect(series["herald_deliveries_total{provider=\"fcm\",outcome=\"dead_token\"}"] == 1)
            for provider in ["fcm", "apns"] {
                // Every attempt but each delivery's last (its outcome) was a retry.
                let retried = attemptsBy(provider) - deliveries.filter { $0.0 == provider }.reduce(0) { $0 + $1.2 }
                #expect(series["herald_deliveries_total{provider=\"\(provider)\",outcome=\"retry\"}"] ?? 0 == Double(retried), "\(deliveries)")
            }
            #expect(series["herald_fanout_deliveries_total"] == 4 && series["herald_fanout_events_total"] == 2)
            #expect(series["herald_fanout_failures_total"] == 0 && series["herald_fanout_passed_over_total"] == 0, "\(series)")
            #expect(series["herald_send_duration_seconds_count{provider=\"fcm\"}"] == Double(attemptsBy("fcm")), "\(deliveries)")
            #expect(series["herald_send_duration_seconds_count{provider=\"apns\"}"] == Double(attemptsBy("apns")))
            #expect(series["herald_event_to_sent_seconds_count"] == 3)
            #expect(series["herald_access_token_refreshes_total{provider=\"fcm\"}"] ?? 0 >= 1)
            #expect(series["herald_access_token_refreshes_total{provider=\"apns\"}"] ?? 0 >= 1)
            #expect(series.keys.contains { $0.hasPrefix("herald_queue_depth{state=\"due\"}") })

            kill(process.processIdentifier, SIGTERM)
            await process.waitForExit()
            #expect(process.terminationStatus == 0)
        }
    }

    /// `name{labels} value` lines of Prometheus text, by series.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func sum(_ samples: [String: Double], _ name: String) -> Double {
        samples.filter { $0.key.hasPrefix(name + "{") || $0.key == name }.values.reduce(0, +)
    }
}
