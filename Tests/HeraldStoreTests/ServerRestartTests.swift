import Foundation
import HeraldCluster
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import Testing

/// Uses a cluster of its own: stopping the shared test server would break other tests.
@Suite struct ServerRestartTests {
    @Test func thePoolFailsWhileTheServerIsDownAndRecoversAfter() async throws {
        try await withEmbeddedCluster { cluster in
            let url = try await cluster.start()
            let pool = PostgresPool(configuration: try PostgresConfiguration(url, connectTimeout: 2), size: 4, logger: testLogger)
            // Open all four connections.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await pool.query("SELECT pg_sleep(0.05)") } }
                try await group.waitForAll()
            }
            #expect(pool.openConnections == 4)

            try await cluster.stop()
            for _ in 0..<6 {
                let error = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
                #expect(error?.isConnectionFailure == true)
            }

            try await cluster.start()
            var recovered = false
            for _ in 0..<10 where !recovered {
                recovered = (try? await pool.query("SELECT 41 + 1").single().decode(Int.self, at: 0)) == 42
            }
            #expect(recovered)
            // Every connection works again, old ones having been replaced.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await pool.query("SELECT 7").single().decode(Int.self, at: 0) } }
                for try await value in group { #expect(value == 7) }
            }
            await pool.close()
        }
    }
}
