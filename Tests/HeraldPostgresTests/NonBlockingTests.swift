import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

/// A connection's calls run on their callers' tasks, libpq in non-blocking mode, and wait for
/// the server on the process's one poller: what that must not change.
@Suite struct NonBlockingTests {
    /// Calls made at once from many tasks on one connection take turns: each gets its own
    /// statement's answer, and the statements enqueued for the next call go with exactly one.
    @Test func callsFromManyTasksOnOneConnectionTakeTurns() async throws {
        try await TestDatabase.with { _, configuration in
            let connection = try await PostgresConnection.connect(configuration, logger: testLogger)
            try await connection.query("CREATE TEMP TABLE calls (n int NOT NULL)")
            let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for n in 0..<200 {
                    group.addTask {
                        if n % 10 == 0 { connection.enqueue("INSERT INTO calls VALUES (\(n))") }
                        let text = "answer \(n)"
                        let row = try await connection.query("SELECT \(n)::int, \(text)::text, pg_backend_pid()").single()
                        #expect(try row.decode(String.self, at: 1) == text)
                        return (n, try row.decode(Int.self, at: 0))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == 200)
            #expect(answers.allSatisfy { $0.key == $0.value })
            let inserted = try await connection.query("SELECT n FROM calls ORDER BY n").map { try $0.decode(Int.self, at: 0) }
            #expect(inserted == Array(stride(from: 0, to: 200, by: 10)))
            await connection.close()
        }
    }

    /// A parameter far larger than the socket's buffers is sent whole (the send waits for the
    /// socket to drain), and a result far larger is read whole (over many waits).
    @Test func aLargeParameterAndALargeResultCrossWhole() async throws {
        try await TestDatabase.with { pool, _ in
            let text = String(repeating: "0123456789abcdef", count: 1 << 20)  // 16 MiB
            let row = try await pool.query("SELECT length(\(text)), \(text) = repeat('0123456789abcdef', 1048576)").single()
            #expect(try row.decode(Int.self, at: 0) == text.utf8.count)
            #expect(try row.decode(Bool.self, at: 1))
            let rows = try await pool.query("SELECT g, repeat('x', 1000) FROM generate_series(1, 20000) AS g")
            #expect(rows.count == 20000)
            #expect(try rows.last?.decode(Int.self, at: 0) == 20000)
            #expect(try rows.allSatisfy { try $0.decode(String.self, at: 1).utf8.count == 1000 })
        }
    }

    /// Many connections waiting at once, each on its own answer, through the one poller.
    @Test func manyConnectionsWaitAtOnceAndEachGetsItsOwnAnswers() async throws {
        try await TestDatabase.with(poolSize: 16) { pool, _ in
            let sums = try await withThrowingTaskGroup(of: Bool.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            for step in 0..<25 {
                                let value = worker * 1000 + step
                                // A short sleep keeps every connection waiting at the same time.
                                let answer = try await connection.query("SELECT \(value)::int, pg_sleep(0.002)").single()
                                guard try answer.decode(Int.self, at: 0) == value else { return false }
                            }
                            return true
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(sums.count == 16)
            #expect(sums.allSatisfy { $0 })
        }
    }

    /// A backend ended while its connection waits for an answer: the call ends with a
    /// connection error (it does not wait out the statement), the connection is broken, and
    /// the next call on it fails the same way at once.
    @Test func aBackendEndedWhileItsCallWaitsFailsTheCall() async throws {
        try await TestDatabase.with { _, configuration in
            let connection = try await PostgresConnection.connect(configuration, logger: testLogger)
            let pid = connection.backendPID
            let killer = Task {
                let other = try await PostgresConnection.connect(configuration, logger: testLogger)
                // Wait for the event: the sleep has started on the other backend.
                while try await other.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE '%pg_sleep(600)%' AND state = 'active'"
                ).single().decode(Int.self, at: 0) == 0 {
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await other.query("SELECT pg_terminate_backend(\(pid))")
                return other
            }
            let error = await #expect(throws: PostgresError.self) { try await connection.query("SELECT pg_sleep(600)") }
            await (try await killer.value).close()
            #expect(error?.kind == .connection)
            #expect(connection.isBroken)
            let again = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
            #expect(again?.kind == .connection)
            await connection.close()
        }
    }
}
