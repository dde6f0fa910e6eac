import Foundation
import HeraldHTTP
import HeraldTestSupport
import Testing

/// (docs/operating/failover.md) `herald serve` across a database outage, on a PostgreSQL of the test's own
/// that it stops and starts: a request that arrives while the database is away waits for it
/// (as through a failover's promotion) and is answered when it is back; one that waits
/// longer than the window gets a 503 problem with Retry-After; the server never needs a restart.
@Suite struct DatabaseOutageCLITests {
    @Test func aRequestWaitsForTheDatabaseAndAnOutageTooLongIsA503() async throws {
        try await withEmbeddedCluster { cluster in
            let url = try await cluster.start()
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": url, "HERALD_TENANT": "acme"])
                _ = try await ok(cli, ["db", "migrate"])
                _ = try await ok(cli, ["tenant", "create", "acme", "--name", "Acme"])
                _ = try await ok(cli, ["user", "add", "alice@acme.test", "--name", "Alice Moreau"])
                let secret = try #require(
                    try await ok(cli, ["token", "create", "--user", "alice@acme.test"])
                        .split(separator: "\n").last.map(String.init))

                let output = home.appendingPathComponent("serve.out")
                let server = try cli.launch(["serve", "--port", "0"], stdout: output)
                defer { if server.isRunning { server.terminate() } }
                let base = try await ServeCLITests.announcedURL(in: output, server: server)
                let http = try HTTPClient(configuration: .init(maxInFlight: 4), logger: testLogger)
                defer { http.shutdown() }
                @Sendable func get(_ path: String) async throws -> HTTPResponse {
                    try await http.send(
                        HTTPRequest(url: base + path, headers: [("Authorization", "Bearer \(secret)")], timeout: .seconds(60)))
                }
                @Sendable func me() async throws -> HTTPResponse { try await get("/v1/me") }
                // A request that reads the database whatever the credential cache holds
                // (`/v1/me` may be answered from it: docs/api.md#credentials).
                @Sendable func activities() async throws -> HTTPResponse { try await get("/v1/activities") }
                #expect(try await me().status == 200)
                // The console's sign-in form (no database needed): its CSRF cookie, for later.
                let signInPage = try await http.send(HTTPRequest(url: base + "/console/sign-in", timeout: .seconds(60)))
                let csrf = try #require(
                    signInPage.headers["set-cookie"]?.split(separator: ";").first?
                        .split(separator: "=", maxSplits: 1).last.map(String.init))

                // Away for a moment: the request waits and is answered once the database is back.
                _ = try await cluster.stop()
                let waiting = Task { try await activities() }
                try await Task.sleep(for: .seconds(1))
                _ = try await cluster.start()
                let answered = try await waiting.value
                #expect(answered.status == 200, "\(String(decoding: answered.body, as: UTF8.self))")
                #expect(String(decoding: answered.body, as: UTF8.self).contains("\"items\""))

                // Away for good: after the window, 503 with a problem document and Retry-After.
                _ = try await cluster.stop()
                let refused = try await activities()
                #expect(refused.status == 503)
                #expect(refused.headers["retry-after"] == "2")
                #expect(refused.headers["content-type"]?.hasPrefix("application/problem+json") == true)
                let problem = try #require(try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
                #expect(problem["status"] as? Int == 503 && problem["title"] as? String == "Database unavailable", "\(problem)")
                // The console says the same, as a page: 503 with Retry-After, not a 500.
                let signIn = try await http.send(
                    HTTPRequest(
                        method: "POST", url: base + "/console/sign-in",
                        headers: [("Cookie", "herald_console_csrf=\(csrf)"), ("Content-Type", "application/x-www-form-urlencoded")],
                        body: Array("csrf=\(csrf)&token=\(secret)".utf8), timeout: .seconds(60)))
                #expect(signIn.status == 503 && signIn.headers["retry-after"] == "2", "\(signIn.status)")
                #expect(String(decoding: signIn.body, as: UTF8.self).contains("Database unavailable"))

                _ = try await cluster.start()
                #expect(try await me().status == 200)
                server.terminate()
                await server.waitForExit()
                #expect(server.terminationStatus == 0)
            }
        }
    }
}
