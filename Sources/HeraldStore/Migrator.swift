import Foundation
import HeraldPostgres
import Logging

/// Applies migrations in order, each in its own transaction, under an advisory lock so any
/// number of `herald` processes may migrate one database at once.
public struct Migrator: Sendable {
    /// The state of one known migration in a database.
    public struct Entry: Sendable {
        public let migration: Migration
        public let appliedAt: Date?
    }

    public let migrations: [Migration]

    /// The advisory lock key: "HERALD" in ASCII.
    static let lockKey = 0x4845_5241_4C44

    public init(migrations: [Migration]) {
        self.migrations = migrations
    }

    /// The migrations shipped inside this binary.
    public static func bundled() throws -> Migrator {
        Migrator(migrations: try Migration.bundled)
    }

    /// Applies every pending migration and returns those it applied.
    /// - Throws: `MigrationError` for a changed or unknown applied migration, or a failing one
    ///   (rolled back; earlier ones stay applied); `PostgresError` for connection problems.
    @discardableResult
    public func migrate(_ pool: PostgresPool, logger: Logger) async throws -> [Migration] {
        try await pool.withConnection { connection in
            try await withLock(connection) {
                let applied = try await checkedApplied(connection)
                var done: [Migration] = []
                for migration in migrations where applied[migration.version] == nil {
                    try await apply(migration, on: connection)
                    logger.debug("applied migration", metadata: ["migration": "\(migration.fileName)"])
                    done.append(migration)
                }
                // One line at info (a first run applies them all); each one is at debug.
                if let first = done.first, let last = done.last {
                    logger.info(
                        "applied \(done.count) migration\(done.count == 1 ? "" : "s")",
                        metadata: ["migrations": "\(first.fileName)\(done.count > 1 ? " … \(last.fileName)" : "")"])
                }
                return done
            }
        }
    }

    /// Every known migration with when it was applied (nil: pending).
    public func status(_ pool: PostgresPool) async throws -> [Entry] {
        try await pool.withConnection { connection in
            try await ensureTable(connection)
            let rows = try await connection.query("SELECT version, applied_at FROM herald_migrations")
            var appliedAt: [Int: Date] = [:]
            for row in rows {
                let (version, date) = try row.decode((Int, Date).self)
                appliedAt[version] = date
            }
            return migrations.map { Entry(migration: $0, appliedAt: appliedAt[$0.version]) }
        }
    }

    /// Throws `MigrationError` unless every known migration is applied unchanged.
    public func verify(_ pool: PostgresPool) async throws {
        try await pool.withConnection { connection in
            let applied = try await checkedApplied(connection)
            let pending = migrations.filter { applied[$0.version] == nil }
            if !pending.isEmpty { throw MigrationError.pending(pending.map(\.fileName)) }
        }
    }

    private func withLock<Result>(_ connection: PostgresConnection, _ body: () async throws -> Result) async throws -> Result {
        try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
        do {
            let result = try await body()
            try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
            return result
        } catch {
            // If the connection broke, the server released the lock with the session.
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
            throw error
        }
    }

    private func ensureTable(_ connection: PostgresConnection) async throws {
        // Concurrent CREATE TABLE IF NOT EXISTS can still collide on the type's name.
        let exists = try await connection.query("SELECT to_regclass('herald_migrations') IS NOT NULL").single()
            .decode(Bool.self, at: 0)
        if exists { return }
        do {
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS herald_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        } catch let error as PostgresError where error.isUniqueViolation {
            // Another process created it first.
        }
    }

    /// Applied versions and checksums, after refusing changed or unknown ones.
    private func checkedApplied(_ connection: PostgresConnection) async throws -> [Int: String] {
        try await ensureTable(connection)
        let rows = try await connection.query("SELECT version, name, checksum FROM herald_migrations ORDER BY version")
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        var applied: [Int: String] = [:]
        for row in rows {
            let (version, name, checksum) = try row.decode((Int, String, String).self)
            guard let migration = known[version] else {
                throw MigrationError.unknownApplied(version: version, name: name)
            }
            guard migration.checksum == checksum else { throw MigrationError.checksumMismatch(migration.fileName) }
            applied[version] = checksum
        }
        return applied
    }

    private func apply(_ migration: Migration, on connection: PostgresConnection) async throws {
        try await connection.query("BEGIN")
        do {
            try await connection.executeScript(migration.sql)
            try await connection.query(
                """
                INSERT INTO herald_migrations (version, name, checksum)
                VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                """)
            try await connection.query("COMMIT")
        } catch {
            _ = try? await connection.query("ROLLBACK")
            if let error = error as? PostgresError, error.isConnectionFailure { throw error }
            throw MigrationError.failed(migration.fileName, "\(error)")
        }
    }
}
