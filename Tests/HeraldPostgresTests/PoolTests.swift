import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

@Suite struct PoolTests {
    @Test func manyTasksShareASmallPoolAndGetTheirOwnResults() async throws {
        try await TestDatabase.with(poolSize: 8) { pool, _ in
            let totals = try await withThrowingTaskGroup(of: Int.self) { group in
                for task in 0..<64 {
                    group.addTask {
                        var sum = 0
                        for query in 0..<200 {
                            let input = task * 1000 + query
                            let row = try await pool.query("SELECT \(input)::int8 * 2 AS doubled, \("t\(task)") AS tag").single()
                            let (doubled, tag) = try row.decode((Int, String).self)
                            #expect(doubled == input * 2)
                            #expect(tag == "t\(task)")
                            sum += doubled
                        }
                        return sum
                    }
                }
                var all: [Int] = []
                for try await total in group { all.append(total) }
                return all
            }
            #expect(totals.count == 64)
            let expected = (0..<64).reduce(0) { sum, task in sum + (0..<200).reduce(0) { $0 + (task * 1000 + $1) * 2 } }
            #expect(totals.reduce(0, +) == expected)
            #expect(pool.openConnections <= 8)
        }
    }

    @Test func aTransactionThatThrowsLeavesNoRows() async throws {
        struct Boom: Error {}
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE items (name text NOT NULL)")
            await #expect(throws: Boom.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (\("first"))")
                    try await connection.query("INSERT INTO items VALUES (\("second"))")
                    throw Boom()
                }
            }
            let afterRollback = try await pool.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0)
            #expect(afterRollback == 0)

            try await pool.withTransaction { connection in
                try await connection.query("INSERT INTO items VALUES (\("kept"))")
            }
            let names = try await pool.query("SELECT name FROM items").map { try $0.decode(String.self, at: 0) }
            #expect(names == ["kept"])
        }
    }

    @Test func aFailedStatementInsideATransactionRollsBackEverything() async throws {
        try await TestDatabase.with { pool, _ in
            try await pool.query("CREATE TABLE items (id int PRIMARY KEY)")
            await #expect(throws: PostgresError.self) {
                try await pool.withTransaction { connection in
                    try await connection.query("INSERT INTO items VALUES (1)")
                    try await connection.query("INSERT INTO items VALUES (1)")
                }
            }
            #expect(try await pool.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0) == 0)
            // The connection went back to the pool in a usable state.
            #expect(try await pool.query("SELECT 1").single().decode(Int.self, at: 0) == 1)
        }
    }

    @Test func aTerminatedConnectionIsReplaced() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, configuration in
            let firstPID = try await pool.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0)
            let killer = try await PostgresConnection.connect(configuration, logger: testLogger)
            try await killer.query("SELECT pg_terminate_backend(\(Int32(firstPID)))")
            await killer.close()

            await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            let secondPID = try await pool.query("SELECT pg_backend_pid()").single().decode(Int.self, at: 0)
            #expect(secondPID != firstPID)
            #expect(pool.openConnections == 1)
        }
    }

    /// (docs/operating/failover.md) A multi-host connection string with `target_session_attrs=read-write`
    /// (how Herald follows a primary that pg_auto_failover moves) passes through whole: a
    /// host that is down is skipped, the primary is found, and another database on the same
    /// hosts keeps every host.
    @Test func aMultiHostStringSkipsAHostThatIsDownAndFindsThePrimary() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, configuration in
            let (sockets, port) = try await pool.query(
                "SELECT current_setting('unix_socket_directories'), current_setting('port')"
            ).single().decode((String, String).self)
            let socket = try #require(sockets.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) })
            let hosts = "/tmp/herald-no-server-\(UUID().uuidString.prefix(8)),\(socket)"
            let multiHost = try PostgresConfiguration(
                configuration.connectionString + " host=\(PostgresConfiguration.quoteConninfoValue(hosts)) port='\(port),\(port)'"
                    + " target_session_attrs=read-write")
            for candidate in [multiHost, try multiHost.with(database: "postgres")] {
                let other = PostgresPool(configuration: candidate, size: 1, logger: testLogger)
                let (recovering, directory) = try await other.query(
                    "SELECT pg_is_in_recovery(), current_setting('unix_socket_directories')"
                ).single().decode((Bool, String).self)
                await other.close()
                #expect(!recovering && directory == sockets)
            }
            #expect(multiHost.redacted.contains("host=\(hosts)"))
        }
    }

    @Test func aClosedPoolRefusesWork() async throws {
        try await TestDatabase.with { _, configuration in
            let pool = PostgresPool(configuration: configuration, size: 2, logger: testLogger)
            try await pool.query("SELECT 1")
            await pool.close()
            let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(error?.kind == .poolClosed)
        }
    }

    @Test func aCancelledWaiterLeavesThePool() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, _ in
            try await pool.withConnection { _ in
                let waiter = Task { try await pool.query("SELECT 1") }
                try await Task.sleep(for: .milliseconds(50))
                waiter.cancel()
                await #expect(throws: CancellationError.self) { try await waiter.value }
            }
            #expect(try await pool.query("SELECT 2").single().decode(Int.self, at: 0) == 2)
        }
    }
}
