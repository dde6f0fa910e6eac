import Foundation
import HeraldPostgres
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI

/// `/healthz` and `/readyz` (the same routes as a worker's probes): a server that cannot work
/// says why in a problem document.
@Suite struct APIHealthTests {
    @Test func aServerThatCannotWorkSaysWhyInAProblemDocument() async throws {
        try await APIHarness.with { api in
            let notReady = HeraldAPI(store: api.store, logger: testLogger, notReadyReason: { "stopping" })
            try await Application(router: notReady.router()).test(.router) { client in
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .serviceUnavailable)
                #expect(ready.headers[.contentType] == "application/problem+json")
                let problem = try #require(try JSONSerialization.jsonObject(with: Data(buffer: ready.body)) as? [String: Any])
                #expect(problem["status"] as? Int == 503 && problem["title"] as? String == "Not ready")
                #expect(problem["detail"] as? String == "stopping")
            }
        }
    }

    /// A database that refused work for want of resources (here a temporary file over its
    /// limit, 53400; in production a full disk, 53100): the request that met it gets 503 with
    /// `Retry-After`, not 500, and `/readyz` says what the database refused for the next 10 s.
    @Test func aDatabaseShortOfResourcesIsA503WithRetryAfterAndReadinessSaysSo() async throws {
        try await TestDatabase.with { pool, _ in
            try await Migrator.bundled().migrate(pool, logger: testLogger)
            let store = Store(pool: pool, logger: testLogger)
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { connection in
                    try await connection.query("SET temp_file_limit = '64kB'")
                    try await connection.query("SET work_mem = '64kB'")
                    try await connection.query("SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g ORDER BY md5(g::text)) s")
                }
            }
            let problem = Problem(try #require(error), logger: testLogger)
            #expect(problem.status == .serviceUnavailable)
            #expect(problem.headers[.retryAfter] == "5")
            let server = HeraldAPI(store: store, logger: testLogger)
            try await Application(router: server.router()).test(.router) { client in
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .serviceUnavailable)
                let body = try #require(try JSONSerialization.jsonObject(with: Data(buffer: ready.body)) as? [String: Any])
                #expect((body["detail"] as? String)?.hasSuffix("out_of_resources") == true)
                #expect((body["detail"] as? String)?.contains("pg_tblspc") == false)
            }
        }
    }
}
