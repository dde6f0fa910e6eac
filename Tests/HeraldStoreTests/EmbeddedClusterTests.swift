import Foundation
import HeraldCluster
import HeraldPostgres
import HeraldRuntime
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct EmbeddedClusterTests {
    @Test func theClusterStartsFromNothingStopsAndKeepsItsData() async throws {
        try await withEmbeddedCluster { cluster in
            let before = try await cluster.status()
            #expect(!before.initialised && !before.running)

            let url = try await cluster.start()
            #expect(try await cluster.status().running)
            let pool = PostgresPool(configuration: try PostgresConfiguration(url), size: 1, logger: testLogger)
            try await pool.query("CREATE TABLE kept (v text)")
            try await pool.query("INSERT INTO kept VALUES (\("still here"))")
            await pool.close()

            #expect(try await cluster.stop())
            let stopped = try await cluster.status()
            #expect(stopped.initialised && !stopped.running && stopped.pid == nil)
            #expect(try await cluster.stop() == false)

            try await cluster.start()
            let again = PostgresPool(configuration: try PostgresConfiguration(url), size: 1, logger: testLogger)
            let value = try await again.query("SELECT v FROM kept").single().decode(String.self, at: 0)
            await again.close()
            #expect(value == "still here")
        }
    }

    /// A killed server (SIGKILL, as a crash or the OOM killer would) is started again by the
    /// next command, at once, and keeps its committed data (PostgreSQL's crash recovery).
    @Test func aKilledServerIsStartedAgainOnNextUse() async throws {
        try await withEmbeddedCluster { cluster in
            let url = try await cluster.start()
            let pool = PostgresPool(configuration: try PostgresConfiguration(url), size: 1, logger: testLogger)
            try await pool.query("CREATE TABLE kept (v text)")
            try await pool.query("INSERT INTO kept VALUES (\("committed"))")
            await pool.close()
            for _ in 0..<2 {
                let pid = try #require(try await cluster.status().pid)
                #expect(kill(pid_t(pid), SIGKILL) == 0)
                // The very next use, without waiting for the old server to be gone.
                try await cluster.start()
                let again = PostgresPool(configuration: try PostgresConfiguration(url), size: 1, logger: testLogger)
                let value = try await again.query("SELECT v FROM kept").single().decode(String.self, at: 0)
                await again.close()
                #expect(value == "committed")
                #expect(try await cluster.status().pid != pid)
            }
        }
    }

    @Test func concurrentStartsCreateOneCluster() async throws {
        try await withEmbeddedCluster { cluster in
            let urls = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<3 { group.addTask { try await cluster.start() } }
                var urls: [String] = []
                for try await url in group { urls.append(url) }
                return urls
            }
            #expect(Set(urls).count == 1)
            #expect(try await cluster.status().running)
        }
    }

    @Test func aMissingInitdbIsExplained() async throws {
        try await withTemporaryDirectory { home in
            let cluster = try EmbeddedCluster(
                home: home.appendingPathComponent("h"), environment: ["HERALD_PG_BIN": "/nonexistent"], logger: testLogger)
            let error = await #expect(throws: EmbeddedClusterError.self) { try await cluster.start() }
            #expect(error?.description.contains("apt-get install postgresql") == true)
        }
    }

    @Test func theDatabaseSourceFollowsTheEnvironment() throws {
        let external = try DatabaseSource.resolve(environment: ["HERALD_DATABASE_URL": "host=/tmp dbname=x"], logger: testLogger)
        guard case .external(let configuration) = external else {
            Issue.record("expected an external database")
            return
        }
        #expect(configuration.connectionString == "host=/tmp dbname=x")
        #expect(throws: DatabaseError.self) {
            try DatabaseSource.resolve(environment: ["HERALD_DATABASE_URL": "postgresql://[oops"], logger: testLogger)
        }
        let home = DatabaseSource.heraldHome(["HOME": "/home/ann"])
        #expect(home.path == "/home/ann/.herald")
        #expect(DatabaseSource.heraldHome(["HERALD_HOME": "/srv/herald"]).path == "/srv/herald")
    }
}
