import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// `herald serve` that cannot start: one line, a non-zero exit, and nothing left running.
@Suite struct ServeStartCLITests {
    /// A port another process listens on, held for `body`'s length.
    func withTakenPort(_ body: (Int) async throws -> Void) async throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(socket, 1) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        try await body(Int(UInt16(bigEndian: address.sin_port)))
    }

    /// It once spun for ever at 100 % CPU, writing "live upkeep failed" 160,000 times a second:
    /// the API's failure cancelled the live channel's loops, which retried instead of ending.
    @Test(arguments: [[], ["--worker"]])
    func aPortInUseIsOneLineAndAnExit(extra: [String]) async throws {
        try await TestDatabase.with { _, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString, "HERALD_LOG_LEVEL": "info"])
                #expect(try await cli.run(["db", "migrate"]).status == 0)
                try await withTakenPort { port in
                    let result = try await cli.run(["serve", "--port", "\(port)"] + extra)
                    #expect(result.status == 1)
                    let lines = result.stderr.split(separator: "\n")
                    #expect(lines.last == "herald: cannot listen on 127.0.0.1:\(port): address already in use", "\(result.stderr)")
                    // The worker's start and stop at most; no loop's failure.
                    #expect(lines.count <= 4, "\(result.stderr)")
                    #expect(!result.stderr.contains("failed"), "\(result.stderr)")
                }
            }
        }
    }

    @Test func aHostThatDoesNotResolveIsOneLine() async throws {
        try await TestDatabase.with { _, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString])
                #expect(try await cli.run(["db", "migrate"]).status == 0)
                let result = try await cli.run(["serve", "--host", "nowhere.invalid", "--port", "0"])
                #expect(result.status == 1)
                #expect(result.stderr.hasPrefix("herald: cannot listen on nowhere.invalid:0: the host name cannot be resolved"), "\(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            }
        }
    }

    /// `herald serve --worker` holds one LISTEN connection: the dispatcher's, the live
    /// channel's and the webhooks' wake-ups are subscriptions on it (each held one of its own).
    @Test func serveWithAWorkerListensOnOneConnection() async throws {
        try await TestDatabase.with { pool, configuration in
            try await withTemporaryDirectory { home in
                let cli = HeraldCLI(home: home, extra: ["HERALD_DATABASE_URL": configuration.connectionString])
                #expect(try await cli.run(["db", "migrate"]).status == 0)
                let output = home.appendingPathComponent("serve.out")
                let server = try cli.launch(["serve", "--port", "0", "--worker"], stdout: output)
                defer { if server.isRunning { server.terminate() } }
                _ = try await ServeCLITests.announcedURL(in: output, server: server)
                func listening() async throws -> Int {
                    try await pool.query(
                        """
                        SELECT count(*)::int FROM pg_stat_activity
                        WHERE datname = current_database() AND (query LIKE 'LISTEN %' OR query LIKE 'UNLISTEN %')
                        """
                    ).single().decode(Int.self, at: 0)
                }
                let up = try await eventually { try await listening() >= 1 }
                #expect(up)
                // Its parts subscribe as they start, within a moment of each other: never a second connection.
                for _ in 0..<30 {
                    let count = try await listening()
                    #expect(count == 1)
                    try await Task.sleep(for: .milliseconds(100))
                }
                server.terminate()
                await server.waitForExit()
                #expect(server.terminationStatus == 0)
            }
        }
    }
}
