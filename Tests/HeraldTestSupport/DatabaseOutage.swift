import HeraldPostgres

extension TestDatabase {
    /// Makes `configuration`'s database refuse every new connection and ends those open, as a
    /// database that went away does: every statement of every pool on it fails until
    /// `allowConnections`.
    public static func refuseConnections(to configuration: PostgresConfiguration) async throws {
        try await asAdmin(on: configuration) { admin, name in
            try await admin.query("ALTER DATABASE \(identifier: name) ALLOW_CONNECTIONS false")
            try await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(name)")
        }
    }

    /// Undoes `refuseConnections`.
    public static func allowConnections(to configuration: PostgresConfiguration) async throws {
        try await asAdmin(on: configuration) { admin, name in
            try await admin.query("ALTER DATABASE \(identifier: name) ALLOW_CONNECTIONS true")
        }
    }

    private static func asAdmin(on configuration: PostgresConfiguration, _ body: (PostgresPool, String) async throws -> Void) async throws {
        guard let name = configuration.database else { throw PostgresError(kind: .invalidConfiguration, message: "no dbname") }
        let admin = PostgresPool(
            configuration: try PostgresConfiguration(try await AdminServer.shared.connectionString()), size: 1, logger: testLogger)
        try await admin.closing { try await body($0, name) }
    }
}
