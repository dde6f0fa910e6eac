import Foundation
import HeraldPostgres
import HeraldTestSupport
import Synchronization
import Testing

/// (docs/operating/failover.md) What a transaction does when its connection dies under it, as in a
/// failover. Connections are killed with `pg_terminate_backend`, the way a server that goes
/// away ends them.
@Suite struct LostConnectionTests {
    @Test func aTransactionWhoseConnectionDiesRunsAgainOnANewOneAndCommitsOnce() async throws {
        try await TestDatabase.with(poolSize: 2) { pool, configuration in
            try await pool.query("CREATE TABLE items (name text NOT NULL)")
            // Two connections idle in the pool: both go when one is found broken. (Each task
            // holds its connection until the other has one too: two short queries at once
            // could run one after the other on one connection when both cores are busy.)
            let holding = HeldCount()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await pool.withConnection { connection in
                            holding.count.add(1, ordering: .relaxed)
                            let deadline = ContinuousClock.now + .seconds(30)
                            while holding.count.load(ordering: .relaxed) < 2, ContinuousClock.now < deadline {
                                try await Task.sleep(for: .milliseconds(5))
                            }
                            try await connection.query("SELECT 1")
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(pool.openConnections == 2)
            let runs = Mutex(0)
            let killer = try await PostgresConnection.connect(configuration, logger: testLogger)
            let pids = try await pool.withTransaction { connection in
                let run = runs.withLock { runs in
                    runs += 1
                    return runs
                }
                try await connection.query("INSERT INTO items VALUES (\("run \(run)"))")
                let pid = try await connection.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0)
                if run == 1 {
                    try await killer.query("SELECT pg_terminate_backend(\(Int32(pid)))")
                    try await connection.query("SELECT 1")
                }
                return pid
            }
            await killer.close()
            #expect(runs.withLock { $0 } == 2)
            #expect(try await pool.query("SELECT name FROM items").map { try $0.decode(String.self, at: 0) } == ["run 2"])
            // The other idle connection was closed with the broken one: one new connection did the second run.
            #expect(pool.openConnections == 1)
            #expect(try await pool.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0) == pids)
        }
    }

    @Test func aDatabaseThatIsNotThereFailsAtOnce() async throws {
        let nowhere = try PostgresConfiguration(
            "host=/tmp/herald-no-server-\(UUID().uuidString.prefix(8)) port=5432 dbname=x", connectTimeout: 2)
        let pool = PostgresPool(configuration: nowhere, size: 1, failoverWindow: .seconds(60), logger: testLogger)
        let started = ContinuousClock.now
        let error = await #expect(throws: PostgresError.self) { try await pool.withTransaction { try await $0.query("SELECT 1") } }
        #expect(error?.kind == .connection)
        // Not run again for the window (a minute): the first connection never came.
        #expect(started.duration(to: .now) < .seconds(30))
        await pool.close()
    }

    /// The connection is killed while `COMMIT` runs: a deferred trigger holds the commit in a
    /// sleep until the test has terminated the backend. The transaction did not commit; the
    /// resolver, asked on a new connection, finds its row missing, and the body runs again.
    @Test func anUnansweredCommitIsResolvedAndRunAgainWhenItDidNotCommit() async throws {
        try await TestDatabase.with(poolSize: 2) { pool, configuration in
            try await pool.withConnection { try await $0.executeScript(sleepingCommit) }
            let runs = Mutex(0)
            let asked = Mutex(0)
            let killer = Task { try await SleepingCommit.terminate(configuration) }
            let result = try await pool.withTransaction(resolveCommit: { connection in
                asked.withLock { $0 += 1 }
                return try await connection.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0) == 1
            }) { connection in
                let run = runs.withLock { runs in
                    runs += 1
                    return runs
                }
                try await connection.query("INSERT INTO items VALUES (\(run))")
                return run
            }
            #expect(try await killer.value)
            #expect(asked.withLock { $0 } == 1)
            #expect(result == 2 && runs.withLock { $0 } == 2)
            #expect(try await pool.query("SELECT id FROM items").map { try $0.decode(Int.self, at: 0) } == [2])
        }
    }

    @Test func anUnansweredCommitWithoutAResolverIsReportedAsUnknown() async throws {
        try await TestDatabase.with(poolSize: 2) { pool, configuration in
            try await pool.withConnection { try await $0.executeScript(sleepingCommit) }
            let killer = Task { try await SleepingCommit.terminate(configuration) }
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { try await $0.query("INSERT INTO items VALUES (1)") }
            }
            #expect(try await killer.value)
            #expect(error?.kind == .commitUnknown)
            #expect(error?.description.contains("may or may not be saved") == true)
            // Nothing was run again.
            #expect(try await pool.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0) == 0)
        }
    }

    /// A table whose first commit sleeps until the test terminates its backend.
    private let sleepingCommit = "CREATE TABLE items (id int NOT NULL); " + SleepingCommit.script(on: "items")
}

/// How many tasks hold a connection at once.
private final class HeldCount: Sendable {
    let count = Atomic<Int>(0)
}
