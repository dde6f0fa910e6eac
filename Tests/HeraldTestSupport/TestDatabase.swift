import Foundation
import HeraldCluster
import HeraldPostgres
import HeraldStore
import Logging

/// A logger that discards everything, for tests.
public let testLogger = Logger(label: "herald.test", factory: { _ in SwiftLogNoOpLogHandler() })

/// Throwaway databases on a real PostgreSQL server, one per test, so tests run in parallel
/// and in any order.
///
/// The server is `HERALD_TEST_DATABASE_URL` (scripts/test starts one); without it, a shared
/// embedded cluster under `/tmp/herald-tests-<uid>` is started on first use.
public enum TestDatabase {
    /// Tests on a database at once (`TestSlots`): at most about 15 connections each (a store's
    /// pool, a dispatcher's, a live hub's, the listener, `herald` processes), well within the
    /// test server's 600 (scripts/test).
    static let slots = TestSlots(32)

    /// Creates an empty database, lends `body` a pool on it and its connection settings,
    /// and drops the database afterwards. Waits for a slot first (`slots`).
    public static func with<Result>(
        poolSize: Int = 4, _ body: (PostgresPool, PostgresConfiguration) async throws -> Result
    ) async throws -> Result {
        try await slots.withSlot { try await withDatabase(poolSize: poolSize, body) }
    }

    private static func withDatabase<Result>(
        poolSize: Int, _ body: (PostgresPool, PostgresConfiguration) async throws -> Result
    ) async throws -> Result {
        let admin = try PostgresConfiguration(try await AdminServer.shared.connectionString())
        let name = "herald_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let adminPool = PostgresPool(configuration: admin, size: 1, logger: testLogger)
        try await adminPool.query("CREATE DATABASE \(identifier: name)")
        let configuration = try admin.with(database: name)
        let pool = PostgresPool(configuration: configuration, size: poolSize, logger: testLogger)
        do {
            let result = try await body(pool, configuration)
            await pool.close()
            try await adminPool.query("DROP DATABASE \(identifier: name) WITH (FORCE)")
            await adminPool.close()
            return result
        } catch {
            await pool.close()
            _ = try? await adminPool.query("DROP DATABASE \(identifier: name) WITH (FORCE)")
            await adminPool.close()
            throw error
        }
    }
}

/// Finds (or starts) the server the throwaway databases live on.
actor AdminServer {
    static let shared = AdminServer()
    private var cached: String?

    func connectionString() async throws -> String {
        if let cached { return cached }
        let environment = ProcessInfo.processInfo.environment
        let url: String
        if let given = environment["HERALD_TEST_DATABASE_URL"], !given.isEmpty {
            url = given
        } else {
            let home = URL(fileURLWithPath: "/tmp/herald-tests-\(getuid())")
            let cluster = try EmbeddedCluster(home: home, environment: environment, logger: testLogger)
            try await cluster.start()
            url = cluster.connectionString
        }
        cached = url
        return url
    }
}

/// A short, unique folder under /tmp (Unix socket paths must stay short), removed by `body`'s end.
public func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let url = URL(fileURLWithPath: "/tmp/ht-" + UUID().uuidString.prefix(8).lowercased())
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// An embedded cluster of the test's own in a fresh folder, stopped and removed afterwards.
public func withEmbeddedCluster<Result>(
    environment: [String: String] = ProcessInfo.processInfo.environment, _ body: (EmbeddedCluster) async throws -> Result
) async throws -> Result {
    try await withTemporaryDirectory { folder in
        let cluster = try EmbeddedCluster(home: folder.appendingPathComponent("h"), environment: environment, logger: testLogger)
        do {
            let result = try await body(cluster)
            _ = try? await cluster.stop()
            return result
        } catch {
            _ = try? await cluster.stop()
            throw error
        }
    }
}

extension TestDatabase {
    /// A throwaway database with Herald's schema, and a `Store` on it.
    public static func withStore<Result>(
        poolSize: Int = 4, _ body: (Store, PostgresConfiguration) async throws -> Result
    ) async throws -> Result {
        try await with(poolSize: poolSize) { pool, configuration in
            try await Migrator.bundled().migrate(pool, logger: testLogger)
            return try await body(Store(pool: pool, logger: testLogger), configuration)
        }
    }
}
