import Foundation
import HeraldCluster
import HeraldPostgres
import HeraldStore
import Logging

/// Where Herald's database is: the server `HERALD_DATABASE_URL` names, or the embedded
/// cluster under `HERALD_HOME`.
public enum DatabaseSource: Sendable {
    case external(PostgresConfiguration)
    case embedded(EmbeddedCluster)

    /// Reads `HERALD_DATABASE_URL` and `HERALD_HOME` (default `~/.herald`).
    /// - Throws: `DatabaseError` for an unparsable URL; `EmbeddedClusterError` when the
    ///   embedded cluster cannot be set up here (no server account under root).
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) throws -> DatabaseSource {
        if let url = environment["HERALD_DATABASE_URL"], !url.isEmpty {
            do {
                return .external(try PostgresConfiguration(url))
            } catch let error as PostgresError {
                throw DatabaseError("HERALD_DATABASE_URL is not a valid libpq URI or conninfo string (\(error.message))")
            }
        }
        return .embedded(try EmbeddedCluster(home: heraldHome(environment), environment: environment, logger: logger))
    }

    /// `HERALD_HOME`, or `~/.herald`.
    public static func heraldHome(_ environment: [String: String]) -> URL {
        if let home = environment["HERALD_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home, isDirectory: true)
        }
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return URL(fileURLWithPath: userHome, isDirectory: true).appendingPathComponent(".herald")
    }

    /// Opens a pool on the Herald schema, ready for use: the embedded cluster is started
    /// and migrated on first use; an external database must already be migrated.
    public func openPool(size: Int = 4, logger: Logger, migrator: Migrator? = nil) async throws -> PostgresPool {
        let migrator = try migrator ?? Migrator.bundled()
        let pool: PostgresPool
        switch self {
        case .external(let configuration):
            pool = PostgresPool(configuration: configuration, size: size, logger: logger)
            try await explainingConnectionFailures { try await migrator.verify(pool) }
        case .embedded(let cluster):
            let url = try await cluster.start()
            pool = PostgresPool(configuration: try PostgresConfiguration(url), size: size, logger: logger)
            try await migrator.migrate(pool, logger: logger)
        }
        return pool
    }

    /// Opens a pool without checking the schema (for `herald db migrate` and `status`).
    public func openUncheckedPool(size: Int = 2, logger: Logger, start: Bool) async throws -> PostgresPool? {
        switch self {
        case .external(let configuration):
            return PostgresPool(configuration: configuration, size: size, logger: logger)
        case .embedded(let cluster):
            if start {
                try await cluster.start()
            } else if try await !cluster.status().running {
                return nil
            }
            return PostgresPool(configuration: try PostgresConfiguration(cluster.connectionString), size: size, logger: logger)
        }
    }
}

extension DatabaseSource {
    /// The libpq connection string Herald uses (for psql and scripts).
    public var connectionString: String {
        switch self {
        case .external(let configuration): configuration.connectionString
        case .embedded(let cluster): cluster.connectionString
        }
    }

    /// An external server as a status line may show it (its password left out); nil for the
    /// embedded cluster.
    public var redactedExternal: String? {
        if case .external(let configuration) = self { return configuration.redacted }
        return nil
    }

    /// What the server says it is.
    public struct Server: Sendable {
        public let version: String
        public let database: String
        public let user: String
    }

    /// The server and each migration's state; nil when the embedded cluster is not running
    /// (it is not started for this).
    public func inspect(logger: Logger) async throws -> (server: Server, migrations: [Migrator.Entry])? {
        guard let pool = try await openUncheckedPool(logger: logger, start: false) else { return nil }
        return try await pool.closing { pool in
            try await explainingConnectionFailures {
                let row = try await pool.query("SELECT version(), current_database(), current_user").single()
                let (version, database, user) = try row.decode((String, String, String).self)
                let migrations = try await Migrator.bundled().status(pool)
                return (Server(version: version, database: database, user: user), migrations)
            }
        }
    }

    /// Applies pending migrations, starting the embedded cluster if needed.
    /// - Returns: the migrations applied now.
    public func migrate(logger: Logger) async throws -> [Migration] {
        guard let pool = try await openUncheckedPool(logger: logger, start: true) else { return [] }
        return try await pool.closing { pool in
            try await explainingConnectionFailures { try await Migrator.bundled().migrate(pool, logger: logger) }
        }
    }
}
