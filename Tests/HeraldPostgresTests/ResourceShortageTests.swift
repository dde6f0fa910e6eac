import Foundation
import HeraldPostgres
import HeraldTestSupport
import Testing

/// A server short of disk, memory or connection slots (class 53) is told apart from the rows'
/// fault and from a lost connection, and the pool counts and remembers it for readiness.
/// Real shortages, on the real server: a temporary file over `temp_file_limit` (53400), and a
/// role whose connection limit is reached (53300).
@Suite struct ResourceShortageTests {
    @Test func aTemporaryFileOverItsLimitIsAShortageThePoolRemembers() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, _ in
            #expect(pool.trouble.latest(within: .seconds(60)) == nil)
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try await connection.query("SET temp_file_limit = '64kB'")
                    try await connection.query("SET work_mem = '64kB'")
                    try await connection.query("SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g ORDER BY md5(g::text)) s")
                }
            }
            #expect(error?.sqlState == "53400")
            #expect(error?.isResourceShortage == true)
            #expect(error?.isDataError == false && error?.isConnectionFailure == false)
            #expect(error.flatMap { DatabaseTrouble.kind(of: $0) } == .outOfResources)
            let seen = try #require(pool.trouble.latest(within: .seconds(60)))
            #expect(seen.kind == .outOfResources && seen.message.contains("53400"))
        }
    }

    @Test func aConnectionRefusedForWantOfASlotIsAShortageOfConnections() async throws {
        try await TestDatabase.with(poolSize: 1) { pool, configuration in
            let role = "herald_no_slot_" + UUID().uuidString.prefix(8).lowercased()
            try await pool.query("CREATE ROLE \(identifier: role) LOGIN CONNECTION LIMIT 0")
            let limited = PostgresPool(
                configuration: try PostgresConfiguration(configuration.connectionString + " user=\(role)"), size: 1, logger: testLogger)
            let error = await #expect(throws: PostgresError.self) { try await limited.query("SELECT 1") }
            await limited.close()
            try await pool.query("DROP ROLE \(identifier: role)")
            #expect(error?.isResourceShortage == true)
            #expect(error.flatMap { DatabaseTrouble.kind(of: $0) } == .tooManyConnections)
            #expect(limited.trouble.latest(within: .seconds(60))?.kind == .tooManyConnections)
            // The pool that worked saw none of it.
            #expect(pool.trouble.latest(within: .seconds(60)) == nil)
        }
    }

    @Test func aServerThatCannotBeReachedIsNoShortage() async throws {
        let pool = PostgresPool(
            configuration: try PostgresConfiguration("host=127.0.0.1 port=1 dbname=x connect_timeout=2"), size: 1, logger: testLogger)
        let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        await pool.close()
        #expect(error?.isResourceShortage == false)
        #expect(pool.trouble.latest(within: .seconds(60))?.kind == .unreachable)
    }
}
