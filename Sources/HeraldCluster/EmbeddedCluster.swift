import Foundation
import HeraldPostgres
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL cluster under `HERALD_HOME`, created and started on demand with the
/// system's `initdb` and `pg_ctl`, reachable only through a Unix socket in its own folder.
///
/// PostgreSQL refuses to run as root, so under root the server runs as an unprivileged
/// account (`postgres`, or `HERALD_PG_USER`). When that account cannot reach `HERALD_HOME`
/// (root's home is private), the cluster lives in `/var/lib/herald/<id>` instead.
/// A lock file serialises `herald` processes that start or stop it at the same moment.
public struct EmbeddedCluster: Sendable {
    /// What `status()` found.
    public struct Status: Sendable {
        public var initialised: Bool
        public var running: Bool
        public var pid: Int?
        public var dataDirectory: String
        public var socketDirectory: String
        public var logFile: String
        public var serverAccount: String?
    }

    /// The database and role every Herald command uses.
    public static let databaseName = "herald"
    public static let roleName = "herald"
    static let port = 5432

    public let home: URL
    let root: URL
    let serverAccount: ServerAccount?
    let binDirectoryOverride: String?
    let logger: Logger

    /// - Parameters:
    ///   - home: the state folder (`HERALD_HOME`).
    ///   - environment: read for `HERALD_PG_BIN` (folder of `initdb` and `pg_ctl`) and
    ///     `HERALD_PG_USER` (the server's account under root).
    public init(home: URL, environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) throws {
        self.home = home.standardizedFileURL
        self.logger = logger
        self.binDirectoryOverride = environment["HERALD_PG_BIN"].flatMap { $0.isEmpty ? nil : $0 }
        if geteuid() == 0 {
            let named = environment["HERALD_PG_USER"].flatMap { $0.isEmpty ? nil : $0 }
            guard let account = ServerAccount(name: named ?? "postgres") else {
                throw named.map(EmbeddedClusterError.noSuchServerAccount) ?? EmbeddedClusterError.noServerAccount
            }
            serverAccount = account
            // HERALD_HOME itself is opened up to the account (0711) when the cluster lives in it.
            if account.canTraverse(to: self.home.deletingLastPathComponent().path) {
                root = self.home.appendingPathComponent("postgres")
            } else {
                root = URL(fileURLWithPath: "/var/lib/herald").appendingPathComponent(Self.identifier(for: self.home.path))
            }
        } else {
            serverAccount = nil
            root = self.home.appendingPathComponent("postgres")
        }
    }

    var dataDirectory: URL { root.appendingPathComponent("data") }
    var socketDirectory: URL { root.appendingPathComponent("run") }
    var logFile: URL { root.appendingPathComponent("server.log") }

    /// The libpq connection string for the Herald database.
    public var connectionString: String {
        connectionString(database: Self.databaseName)
    }

    func connectionString(database: String) -> String {
        "host=\(PostgresConfiguration.quoteConninfoValue(socketDirectory.path)) port=\(Self.port) "
            + "dbname=\(database) user=\(Self.roleName)"
    }

    /// Creates the cluster if needed, starts it if stopped, and creates the Herald database.
    /// A server that crashed or was killed is started again (PostgreSQL's crash recovery
    /// does the rest). Returns the connection string. Safe to call from several processes at once.
    @discardableResult
    public func start() async throws -> String {
        let lock = try await offload { try lockHome() }
        defer { lock.release() }
        let (created, started) = try await offload { () throws -> (Bool, Bool) in
            let created = try initialiseIfNeeded()
            if try isRunning() { return (created, false) }
            try startServer()
            return (created, true)
        }
        do {
            try await createDatabaseIfNeeded()
        } catch let error as PostgresError where error.isConnectionFailure && !started {
            // Believed running, yet it does not answer: it was killed a moment ago and is still
            // going away. Wait for it to be gone, then start it again.
            logger.warning("the embedded PostgreSQL does not answer; starting it again", metadata: ["error": "\(error.message)"])
            try await offload { try restartAfterCrash() }
            try await createDatabaseIfNeeded()
        }
        if created { logger.info("created the embedded PostgreSQL cluster", metadata: ["path": "\(root.path)"]) }
        return connectionString
    }

    /// Stops the server if it runs (fast shutdown: open sessions are ended).
    /// Returns whether it was running.
    @discardableResult
    public func stop() async throws -> Bool {
        let lock = try await offload { try lockHome() }
        defer { lock.release() }
        return try await offload { () throws -> Bool in
            guard isInitialised, try isRunning() else { return false }
            let tools = try binaries()
            let result = try runTool(tools.pgCtl, ["stop", "-D", dataDirectory.path, "-m", "fast", "-w", "-t", "60", "-s"])
            guard result.status == 0 else { throw EmbeddedClusterError.commandFailed("pg_ctl stop", result.output) }
            return true
        }
    }

    /// Reports whether the cluster exists and runs; starts nothing.
    public func status() async throws -> Status {
        try await offload { () throws -> Status in
            let running = isInitialised ? try isRunning() : false
            return Status(
                initialised: isInitialised,
                running: running,
                pid: running ? serverPID() : nil,
                dataDirectory: dataDirectory.path,
                socketDirectory: socketDirectory.path,
                logFile: logFile.path,
                serverAccount: serverAccount?.name
            )
        }
    }

    var isInitialised: Bool {
        FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path)
    }

    // MARK: - Steps (blocking; run off the cooperative pool)

    private func lockHome() throws -> FileLock {
        try makeDirectories(home.path, mode: 0o700)
        let lockPath = home.appendingPathComponent("cluster.lock").path
        guard let lock = FileLock(path: lockPath) else {
            throw EmbeddedClusterError.homeNotWritable(home.path, String(cString: strerror(errno)))
        }
        return lock
    }

    /// Runs initdb into a scratch folder and renames it into place, so a failed or
    /// interrupted initdb never leaves a half-made cluster behind.
    private func initialiseIfNeeded() throws -> Bool {
        if isInitialised { return false }
        let tools = try binaries()
        let socketPath = socketDirectory.appendingPathComponent(".s.PGSQL.\(Self.port)").path
        guard socketPath.utf8.count < 100 else { throw EmbeddedClusterError.pathTooLong(socketPath) }

        let manager = FileManager.default
        let scratch = root.appendingPathComponent("data.initdb")
        if serverAccount != nil, !root.path.hasPrefix(home.path + "/") {
            // /var/lib/herald: the server's account must pass through, not list.
            try makeDirectories(root.deletingLastPathComponent().path, mode: 0o711)
        }
        try makeDirectories(root.path, mode: 0o700)
        try makeDirectories(socketDirectory.path, mode: 0o700)
        do {
            if manager.fileExists(atPath: scratch.path) { try manager.removeItem(at: scratch) }
            if let account = serverAccount {
                if root.path.hasPrefix(home.path + "/") {
                    // Let the server's account pass through HERALD_HOME without listing it.
                    chmod(home.path, 0o711)
                } else {
                    try? manager.createSymbolicLink(at: home.appendingPathComponent("postgres"), withDestinationURL: root)
                }
                for path in [root.path, socketDirectory.path] { try account.own(path) }
            }
        } catch let error as EmbeddedClusterError {
            throw error
        } catch {
            throw EmbeddedClusterError.homeNotWritable(root.path, Self.reason(error))
        }

        let result = try runTool(
            tools.initdb,
            [
                "-D", scratch.path, "-U", Self.roleName, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-instructions"
            ])
        guard result.status == 0 else {
            try? manager.removeItem(at: scratch)
            throw EmbeddedClusterError.commandFailed("initdb", result.output)
        }
        let settings = """

            # Herald's embedded cluster: a Unix socket in a private folder, no TCP.
            listen_addresses = ''
            unix_socket_directories = '\(socketDirectory.path.replacingOccurrences(of: "'", with: "''"))'
            unix_socket_permissions = 0700
            port = \(Self.port)
            max_connections = 200

            """
        do {
            let config = scratch.appendingPathComponent("postgresql.conf")
            let handle = try FileHandle(forWritingTo: config)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(settings.utf8))
            try handle.close()
            try manager.moveItem(at: scratch, to: dataDirectory)
        } catch {
            throw EmbeddedClusterError.homeNotWritable(root.path, Self.reason(error))
        }
        return true
    }

    private func isRunning() throws -> Bool {
        let tools = try binaries()
        let result = try runTool(tools.pgCtl, ["status", "-D", dataDirectory.path])
        guard result.status == 0 else { return false }
        // pg_ctl counts a zombie as running: a server killed under a parent that never reaps
        // it (a container's first process, say) would be "running" forever, and PostgreSQL
        // itself would refuse to start beside its lock file. A dead server's lock file goes.
        if let pid = serverPID(), !Self.isAlive(pid) {
            removeLockFiles(of: pid)
            return false
        }
        return true
    }

    /// The data directory's lock file and the socket's, left by a dead server `pid`.
    private func removeLockFiles(of pid: Int) {
        let files = FileManager.default
        try? files.removeItem(at: dataDirectory.appendingPathComponent("postmaster.pid"))
        for name in (try? files.contentsOfDirectory(atPath: socketDirectory.path)) ?? [] where name.hasSuffix(".lock") {
            let lock = socketDirectory.appendingPathComponent(name)
            let owner = (try? String(contentsOf: lock, encoding: .utf8))?.split(separator: "\n").first
            if owner.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) == pid { try? files.removeItem(at: lock) }
        }
    }

    /// Waits (up to 10 s) for a server that stopped answering to be gone, then starts it.
    private func restartAfterCrash() throws {
        for _ in 0..<50 {
            if try !isRunning() { return try startServer() }
            usleep(200_000)
        }
        throw EmbeddedClusterError.commandFailed(
            "pg_ctl start", "the server (pid \(serverPID().map(String.init) ?? "?")) neither answers nor exits; see \(logFile.path)")
    }

    /// Whether `pid` is a live process (not gone, not a zombie).
    static func isAlive(_ pid: Int) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        // "pid (comm) S …": the state follows the command name.
        let state = stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).first
        return state != nil && state != "Z" && state != "X"
    }

    private func startServer() throws {
        let tools = try binaries()
        let result = try runTool(
            tools.pgCtl,
            [
                "start", "-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60", "-s"
            ])
        guard result.status == 0 else {
            let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            let lastLines = log.split(separator: "\n").suffix(3).joined(separator: " | ")
            throw EmbeddedClusterError.commandFailed("pg_ctl start", lastLines.isEmpty ? result.output : lastLines)
        }
    }

    private func serverPID() -> Int? {
        guard let text = try? String(contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8) else {
            return nil
        }
        return text.split(separator: "\n").first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    private func createDatabaseIfNeeded() async throws {
        let configuration = try PostgresConfiguration(connectionString(database: "postgres"))
        let connection = try await PostgresConnection.connect(configuration, logger: logger)
        do {
            let exists = try await connection.query(
                "SELECT count(*) FROM pg_database WHERE datname = \(Self.databaseName)"
            ).single().decode(Int.self, at: 0)
            if exists == 0 {
                try await connection.query("CREATE DATABASE \(identifier: Self.databaseName)")
            }
            await connection.close()
        } catch {
            await connection.close()
            throw error
        }
    }

    // MARK: - Tools

    struct Binaries {
        let initdb: String
        let pgCtl: String
    }

    func binaries() throws -> Binaries {
        var candidates: [String] = []
        if let binDirectoryOverride {
            candidates = [binDirectoryOverride]
        } else {
            candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
                candidates.append("/usr/lib/postgresql/\(version)/bin")
            }
        }
        for directory in candidates {
            let initdb = directory + "/initdb"
            let pgCtl = directory + "/pg_ctl"
            if FileManager.default.isExecutableFile(atPath: initdb), FileManager.default.isExecutableFile(atPath: pgCtl) {
                return Binaries(initdb: initdb, pgCtl: pgCtl)
            }
        }
        let searched = binDirectoryOverride.map { "HERALD_PG_BIN=\($0)" } ?? "searched PATH and /usr/lib/postgresql/*/bin"
        throw EmbeddedClusterError.binariesMissing(searched)
    }

    /// Runs a PostgreSQL tool, as the server's account under root, and returns its exit
    /// status and the last lines of its output.
    private func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        var executable = path
        var fullArguments = arguments
        if let account = serverAccount {
            executable = ServerAccount.runuser
            fullArguments = ["-u", account.name, "--", path] + arguments
        }
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("PG") { environment[key] = nil }
        environment["LC_ALL"] = "C"
        let outcome: ChildProcess.Outcome
        do {
            // From a folder every account can enter: the tools complain when they cannot.
            outcome = try ChildProcess.run(executable, fullArguments, environment: environment, directory: "/")
        } catch {
            throw EmbeddedClusterError.commandFailed(path, "\(error)")
        }
        let lines = outcome.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return (outcome.status, lines.suffix(3).joined(separator: " | "))
    }

    static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }

    /// A short stable name for a HERALD_HOME path (FNV-1a, 64 bits).
    static func identifier(for path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

/// Runs blocking work on a GCD thread rather than on Swift's cooperative pool.
func offload<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Swift.Result { try body() })
        }
    }
}
