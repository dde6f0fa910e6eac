import ArgumentParser
import Foundation
import HeraldCluster
import HeraldRuntime
import HeraldStore

struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "Manage the database: the embedded cluster, or the server HERALD_DATABASE_URL names.",
        subcommands: [Start.self, Stop.self, Status.self, Migrate.self, URLCommand.self]
    )

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the embedded PostgreSQL cluster if needed and start it.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let cluster = try embeddedCluster()
            try await cluster.start()
            let status = try await cluster.status()
            if options.json { return try printJSON(StatusOutput(embedded: status, server: nil, migrations: nil)) }
            print("embedded PostgreSQL is running (pid \(status.pid.map(String.init) ?? "?"), socket \(status.socketDirectory))")
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the embedded PostgreSQL cluster.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let cluster = try embeddedCluster()
            let wasRunning = try await cluster.stop()
            if options.json { return try printJSON(["stopped": wasRunning]) }
            print(wasRunning ? "embedded PostgreSQL stopped" : "embedded PostgreSQL was not running")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show where the database is, whether it runs, and which migrations are applied.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let logger = HeraldLogging.logger
            let source = try DatabaseSource.resolve(logger: logger)
            var embedded: EmbeddedCluster.Status?
            if case .embedded(let cluster) = source { embedded = try await cluster.status() }
            var server: ServerOutput?
            var migrations: [MigrationOutput]?
            if let found = try await source.inspect(logger: logger) {
                server = ServerOutput(version: found.server.version, database: found.server.database, user: found.server.user)
                migrations = found.migrations.map { MigrationOutput(file: $0.migration.fileName, appliedAt: $0.appliedAt) }
            }
            let output = StatusOutput(embedded: embedded, server: server, migrations: migrations)
            if options.json { return try printJSON(output) }
            print(output.table(source: source))
        }
    }

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending migrations (starting the embedded cluster if needed).",
            discussion: "Safe to run from several machines at once: runners take turns under an advisory lock.")

        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let logger = HeraldLogging.logger
            let source = try DatabaseSource.resolve(logger: logger)
            let applied = try await source.migrate(logger: logger)
            if options.json { return try printJSON(["applied": applied.map(\.fileName)]) }
            print(applied.isEmpty ? "schema is up to date" : "applied \(applied.map(\.fileName).joined(separator: ", "))")
        }
    }

    struct URLCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "url",
            abstract: "Print the libpq connection string herald uses (for psql and scripts).")

        func run() async throws {
            print(try DatabaseSource.resolve(logger: HeraldLogging.logger).connectionString)
        }
    }
}

private func embeddedCluster() throws -> EmbeddedCluster {
    switch try DatabaseSource.resolve(logger: HeraldLogging.logger) {
    case .external: throw EmbeddedClusterError.external
    case .embedded(let cluster): return cluster
    }
}

struct ServerOutput: Encodable {
    let version: String
    let database: String
    let user: String
}

struct MigrationOutput: Encodable {
    let file: String
    let appliedAt: Date?
}

struct StatusOutput: Encodable {
    let embedded: EmbeddedCluster.Status?
    let server: ServerOutput?
    let migrations: [MigrationOutput]?

    func table(source: DatabaseSource) -> String {
        var fields: [(String, String)] = []
        switch source {
        case .external:
            fields.append(("database", "external (\(source.redactedExternal ?? ""))"))
        case .embedded:
            guard let embedded else { break }
            let state =
                !embedded.initialised
                ? "not created yet (herald db start creates it)"
                : embedded.running ? "running, pid \(embedded.pid.map(String.init) ?? "?")" : "stopped (herald db start)"
            fields.append(("database", "embedded, \(state)"))
            fields.append(("data", embedded.dataDirectory))
            fields.append(("socket", embedded.socketDirectory))
            fields.append(("log", embedded.logFile))
            if let account = embedded.serverAccount { fields.append(("runs as", account)) }
        }
        if let server {
            fields.append(("server", server.version.split(separator: " ").prefix(2).joined(separator: " ")))
            fields.append(("connected", "database \(server.database) as \(server.user)"))
        }
        if let migrations {
            let applied = migrations.filter { $0.appliedAt != nil }.count
            let pending = migrations.filter { $0.appliedAt == nil }.map(\.file)
            var line = "\(applied) of \(migrations.count) migrations applied"
            if !pending.isEmpty { line += "; pending: \(pending.joined(separator: ", ")) (herald db migrate)" }
            fields.append(("schema", line))
        }
        let width = fields.map(\.0.count).max() ?? 0
        return fields.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n")
    }
}

extension EmbeddedCluster.Status: Encodable {
    enum CodingKeys: String, CodingKey {
        case initialised, running, pid, dataDirectory, socketDirectory, logFile, serverAccount
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(initialised, forKey: .initialised)
        try container.encode(running, forKey: .running)
        try container.encodeIfPresent(pid, forKey: .pid)
        try container.encode(dataDirectory, forKey: .dataDirectory)
        try container.encode(socketDirectory, forKey: .socketDirectory)
        try container.encode(logFile, forKey: .logFile)
        try container.encodeIfPresent(serverAccount, forKey: .serverAccount)
    }
}
