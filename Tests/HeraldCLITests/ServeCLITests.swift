import Foundation
import HeraldEmulator
import HeraldHTTP
import HeraldTestSupport
import Testing

/// `herald serve --worker` as a user runs it: the real binary, a real PostgreSQL, the
/// emulator, and the apps' calls over HTTP.
@Suite struct ServeCLITests {
    @Test func theAppsDriveAnActivityAndThePushesReachTheRightApps() async throws {
        try await withEmulatorCLI(endpoint: \.http1) { cli, _, emulator in
            for arguments in [
                ["tenant", "create", "acme", "--name", "Acme"], ["team", "create", "ops", "--name", "Field Ops"],
                ["user", "add", "alice@acme.test", "--name", "Alice Moreau"], ["user", "add", "chidi@acme.test", "--name", "Chidi Okafor"],
                ["team", "add-member", "ops", "alice@acme.test", "--role", "manager"],
                ["team", "add-member", "ops", "chidi@acme.test", "--role", "member"]
            ] {
                let result = try await cli.run(arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
            }
            func secret(_ email: String) async throws -> String {
                let created = try await cli.run(["token", "create", "--user", email])
                return try #require(created.stdout.split(separator: "\n").last.map(String.init))
            }
            let alice = try await secret("alice@acme.test")
            let chidi = try await secret("chidi@acme.test")

            let output = FileManager.default.temporaryDirectory.appendingPathComponent("herald-serve-\(UUID().uuidString).out")
            defer { try? FileManager.default.removeItem(at: output) }
            let server = try cli.launch(["serve", "--port", "0", "--worker"], stdout: output)
            defer { if server.isRunning { server.terminate() } }
            let base = try await Self.announcedURL(in: output, server: server)
            let http = try HTTPClient(configuration: .init(maxInFlight: 4), logger: testLogger)
            defer { http.shutdown() }
            func call(_ method: String, _ path: String, _ token: String, _ json: [String: Any]? = nil) async throws -> [String: Any] {
                let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
                let response = try await http.send(
                    HeraldHTTP.HTTPRequest(
                        method: method, url: base + path,
                        headers: [("Authorization", "Bearer \(token)")] + (json == nil ? [] : [("Content-Type", "application/json")]), body: body))
                #expect(
                    (200..<300).contains(response.status), "\(method) \(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
                return ((try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]) ?? [:]
            }
            // The phones register; Alice has the member app too, which hears nothing of this.
            _ = try await call("POST", "/v1/devices", chidi, ["token": "chidi-pixel", "app": "member", "platform": "android"])
            let aliceIPhone = "a11ce0aa0000000000000000000000000000000000000000000000000000fade"
            _ = try await call("POST", "/v1/devices", alice, ["token": aliceIPhone, "app": "manager", "platform": "ios", "provider": "apns"])
            _ = try await call("POST", "/v1/devices", alice, ["token": "alice-member-app", "app": "member", "platform": "android"])
            let activity = try await call(
                "POST", "/v1/activities", alice,
                ["team": "ops", "assignee": "chidi@acme.test", "name": "Ship v2", "deadline": TestDates.deadline, "priority": "p0"])
            let id = try #require(activity["id"] as? String)
            // Chidi's app lists his activities: this one, assigned.
            let listed = try #require(try await call("GET", "/v1/activities", chidi)["items"] as? [[String: Any]])
            #expect(listed.map { $0["id"] as? String } == [id] && listed.first?["status"] as? String == "assigned")
            // Each person acts once the push before has reached their phone, as people do: a push
            // still unsent when the activity moves on is superseded, not sent.
            let deadline = ContinuousClock.now + .seconds(60)
            func arrived(_ count: Int) async throws {
                while await emulator.messages().count < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await arrived(1)
            _ = try await call("POST", "/v1/activities/\(id)/start", chidi)
            try await arrived(2)
            _ = try await call("POST", "/v1/activities/\(id)/complete", chidi)
            try await arrived(3)
            _ = try await call("POST", "/v1/activities/\(id)/approve", alice)

            // assigned → Chidi; started, completion requested → Alice's manager app; approved → Chidi.
            try await arrived(4)
            let messages = await emulator.messages()
            #expect(messages.map(\.token).filter { $0 == "chidi-pixel" }.count == 2, "\(messages.map(\.token))")
            #expect(messages.map(\.token).filter { $0 == aliceIPhone }.count == 2)
            #expect(!messages.contains { $0.token == "alice-member-app" })

            // Chidi reads his own history: his two notifications, sent, and none of Alice's.
            var history: [[String: Any]] = []
            while ContinuousClock.now < deadline {
                history = (try await call("GET", "/v1/history", chidi)["items"] as? [[String: Any]]) ?? []
                if history.count == 2, history.allSatisfy({ $0["status"] as? String == "sent" }) { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(Set(history.compactMap { $0["event"] as? String }) == ["activity.assigned", "activity.approved"], "\(history)")
            #expect(
                history.allSatisfy {
                    ($0["recipient"] as? [String: Any])?["email"] as? String == "chidi@acme.test" && $0["status"] as? String == "sent"
                })
            // A page at a time: one, then the other, then no further page.
            let first = try await call("GET", "/v1/history?limit=1", chidi)
            let cursor = try #require(first["next"] as? String)
            let second = try await call("GET", "/v1/history?limit=1&cursor=\(cursor)", chidi)
            let pages = [first, second].flatMap { ($0["items"] as? [[String: Any]]) ?? [] }.compactMap { $0["id"] as? String }
            #expect(pages.count == 2 && Set(pages) == Set(history.compactMap { $0["id"] as? String }) && second["next"] == nil)
            let entry = try #require(history.first?["id"] as? String)
            let detail = try await call("GET", "/v1/history/\(entry)", chidi)
            let deliveries = (detail["deliveries"] as? [[String: Any]]) ?? []
            #expect(deliveries.count == 1 && deliveries.first?["status"] as? String == "sent", "\(detail)")
            #expect((deliveries.first?["attempts"] as? [[String: Any]])?.isEmpty == false)

            // SIGTERM: requests and sends in flight finish, exit 0.
            server.terminate()
            await server.waitForExit()
            #expect(server.terminationStatus == 0)
        }
    }

    /// The base URL `herald serve` prints once it listens.
    static func announcedURL(in output: URL, server: LaunchedCommand) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, server.isRunning {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("http") }) { return String(line) }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CancellationError()
    }
}
