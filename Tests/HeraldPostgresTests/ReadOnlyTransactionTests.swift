import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

/// `PostgresPool.withTransaction(readOnly: true)`: `BEGIN READ ONLY`, and its `COMMIT` sent
/// ahead of the connection's next call, or at once when the connection goes back idle.
@Suite struct ReadOnlyTransactionTests {
    /// How many of this database's connections sit in an open transaction, seen by another.
    private func openTransactions(_ configuration: PostgresConfiguration) async throws -> Int {
        let observer = try await PostgresConnection.connect(configuration, logger: testLogger)
        let count: Int
        do {
            count = try await observer.query(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'
                """
            ).single().decode(Int.self, at: 0)
        } catch {
            await observer.close()
            throw error
        }
        await observer.close()
        return count
    }

    @Test func aConnectionThatGoesBackIdleHoldsNoTransaction() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, configuration in
            try await pool.query("CREATE TABLE items (name text NOT NULL)")
            try await pool.query("INSERT INTO items VALUES ('a')")
            let count = try await pool.withTransaction(readOnly: true) { connection in
                try await connection.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0)
            }
            #expect(count == 1)
            #expect(try await openTransactions(configuration) == 0)
            // Nor a lock: a table it read can be changed by another connection at once.
            let other = try await PostgresConnection.connect(configuration, logger: testLogger)
            try await other.query("SET lock_timeout = '2s'")
            try await other.query("ALTER TABLE items ADD COLUMN note text")
            await other.close()
        }
    }

    @Test func aWriteInAReadOnlyTransactionFailsAtOnceAndThePoolGoesOn() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, configuration in
            try await pool.query("CREATE TABLE items (name text NOT NULL)")
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withTransaction(readOnly: true) { connection in
                    try await connection.query("INSERT INTO items VALUES ('a')")
                }
            }
            // Refused at once (not taken for a server demoted by a failover, and run again).
            #expect(error?.kind == .unsupported)
            #expect(error?.message.contains("read-only transaction") == true)
            try await pool.withTransaction { connection in try await connection.query("INSERT INTO items VALUES ('b')") }
            #expect(try await pool.query("SELECT string_agg(name, ',') FROM items").single().decode(String.self, at: 0) == "b")
            #expect(try await openTransactions(configuration) == 0)
        }
    }

    /// Reads and writes from many tasks on two connections: connections change hands with
    /// a read's `COMMIT` still to send, and every write is committed, every read sees the rows
    /// committed before it began, and no connection is left in a transaction.
    @Test func readsAndWritesSharingConnectionsAllComplete() async throws {
        try await TestDatabase.with(poolSize: 2) { pool, configuration in
            try await pool.query("CREATE TABLE items (task int NOT NULL, n int NOT NULL)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        for n in 0..<25 {
                            try await pool.withTransaction { connection in
                                try await connection.query("INSERT INTO items VALUES (\(task), \(n))")
                            }
                            let mine = try await pool.withTransaction(readOnly: true) { connection in
                                try await connection.query("SELECT count(*) FROM items WHERE task = \(task)").single().decode(Int.self, at: 0)
                            }
                            #expect(mine == n + 1)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await pool.query("SELECT count(*) FROM items").single().decode(Int.self, at: 0) == 16 * 25)
            #expect(try await openTransactions(configuration) == 0)
        }
    }
}
