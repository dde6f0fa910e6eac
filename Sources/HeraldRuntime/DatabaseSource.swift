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
