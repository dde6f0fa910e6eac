import CLibPQ
import Foundation
import Logging
import Synchronization

/// One libpq connection in non-blocking mode.
///
/// Its calls run on their callers' tasks, one at a time (in the order they came): libpq
/// sends without blocking, and a task waits for the server's answer on `PostgresPoller`,
/// never holding a thread meanwhile. Obtain one through `PostgresPool.withConnection`, or
/// `connect` for a connection the caller owns and must `close()`.
public final class PostgresConnection: @unchecked Sendable {
    // Safety: `handle`, `notices`, `prepared` and `nextPreparedNumber` are only read or
    // written by the task that holds `turnstile`; the rest is behind mutexes of its own.
    private var handle: OpaquePointer?
    private var notices: Unmanaged<NoticeSink>?
    /// Statements prepared on this connection, by SQL text and parameter types.
    private var prepared: [PreparedStatementKey: String] = [:]
    /// The number in the next prepared statement's name.
    private var nextPreparedNumber = 0

    /// How many statements a connection keeps prepared; past that, statements are parsed
    /// and planned on every run, as unprepared ones are.
    public static let preparedLimit = 200

    private let turnstile = Turnstile()
    private let broken = Mutex(false)
    /// Whether the last call left the connection outside a transaction block.
    private let outsideTransaction = Mutex(true)
    /// Statements to send ahead of the next call, in the same round trip (see `deferScript`
    /// and `enqueue`).
    private let pending = Mutex<[PendingStatement]>([])
    let logger: Logger

    /// The backend's process id, useful for `pg_terminate_backend` and for log lines.
    public let backendPID: Int32

    private init(handle: OpaquePointer, notices: Unmanaged<NoticeSink>, logger: Logger) {
        self.handle = handle
        self.notices = notices
        self.logger = logger
        self.backendPID = PQbackendPID(handle)
    }

    /// Opens a connection and sets the session to UTF-8, ISO dates and UTC.
    /// - Throws: `PostgresError` of kind `.connection` with libpq's reason.
    public static func connect(_ configuration: PostgresConfiguration, logger: Logger) async throws -> PostgresConnection {
        // libpq connects in blocking calls (name lookup, TLS, authentication): on a thread
        // of their own, which ends once connected.
        let thread = BlockingThread(name: "herald.connect")
        defer { thread.stop() }
        let connection = try await thread.run { () throws -> PostgresConnection in
            let (handle, sink) = try openHandle(configuration, logger: logger)
            guard PQsetnonblocking(handle, 1) == 0, PQsocket(handle) >= 0 else {
                let reason = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
                PQfinish(handle)
                sink.release()
                throw PostgresError(kind: .connection, message: "cannot use the connection to PostgreSQL: \(firstLine(of: reason))")
            }
            return PostgresConnection(handle: handle, notices: sink, logger: logger)
        }
        if let setup = configuration.sessionSetup {
            do {
                try await connection.executeScript(setup)
            } catch {
                await connection.close()
                throw error
            }
        }
        return connection
    }

    /// Connects synchronously on the calling thread. For the listener's own thread only.
    static func openHandle(_ configuration: PostgresConfiguration, logger: Logger) throws -> (OpaquePointer, Unmanaged<NoticeSink>) {
        // libpq keeps the last value of a repeated keyword, so our defaults come first and
        // anything the connection string says (expanded from `dbname`) wins over them.
        // JIT is off: Herald's statements are short, and a plan whose estimate crossed
        // jit_above_cost spent ~50 ms compiling to run a 0.4 ms query.
        // TCP keepalives and a user timeout: a server machine that vanishes (no FIN, no RST)
        // is noticed within about 10 s instead of the kernel's two hours, on an idle
        // connection and on one waiting for an answer alike. (Ignored on Unix sockets.)
        let keywords = [
            "fallback_application_name", "client_encoding", "connect_timeout", "options", "keepalives", "keepalives_idle",
            "keepalives_interval", "keepalives_count", "tcp_user_timeout", "dbname"
        ]
        let values = [
            configuration.applicationName, "UTF8", String(configuration.connectTimeout), "-c jit=off", "1", "5", "2", "3", "10000",
            configuration.connectionString
        ]
        let handle = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let handle else {
            throw PostgresError(kind: .connection, message: "out of memory while connecting to PostgreSQL")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let reason = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
            PQfinish(handle)
            throw PostgresError(
                kind: .connection,
                message: "cannot connect to PostgreSQL (\(configuration.redacted)): \(firstLine(of: reason))"
            )
        }
        let sink = Unmanaged.passRetained(NoticeSink(logger: logger))
        PQsetNoticeReceiver(
            handle,
            { context, result in
                guard let context, let result, let text = PQresultErrorMessage(result) else { return }
                let sink = Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
                sink.logger.debug("postgres notice", metadata: ["postgres.notice": "\(String(cString: text).trimmingTrailingNewlines())"])
            }, sink.toOpaque())
        let setup = PQexec(handle, "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET IntervalStyle = iso_8601")
        defer { PQclear(setup) }
        guard PQresultStatus(setup) == PGRES_COMMAND_OK else {
            let error = errorFrom(result: setup, connection: handle, query: nil)
            PQfinish(handle)
            sink.release()
            throw error
        }
        return (handle, sink)
    }

    /// Whether libpq saw the connection fail; the pool drops broken connections.
    public var isBroken: Bool { broken.withLock { $0 } }

    /// Runs a statement with bound parameters and returns its rows.
    ///
    /// The statement is prepared on the connection the first time it runs (named
    /// server-side, by its text and parameter types) and executed from then on without
    /// being parsed again; PostgreSQL decides per statement whether its plan is kept too.
    /// - Throws: `PostgresError` (`.server` with SQLSTATE, or `.connection`).
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await withHandle { [self] wire, ahead in try await pipeline(ahead + [.query(query)], on: wire) }
    }

    /// Runs `queries` in one round trip, in order, and returns each one's rows: reads and
    /// writes of a transaction where none needs what another returns. If one fails, the rest
    /// do not run, and its error is thrown (outside a transaction block the call is one
    /// implicit transaction: none of it is kept).
    public func query(_ queries: [PostgresQuery]) async throws -> [PostgresRows] {
        guard !queries.isEmpty else { return [] }
        return try await withHandle { [self] wire, ahead in
            try await PostgresPipeline(wire: wire).run(
                ahead + queries.map { .query($0) }, resultIndices: Array(ahead.count..<ahead.count + queries.count), plan: plan(for:),
                prepared: { prepared[$0] = $1 })
        }
    }

    /// Runs `statements` in one round trip and returns the rows of the one at `resultIndex`
    /// (the last if nil), holding the connection's turn.
    private func pipeline(_ statements: [PendingStatement], resultIndex: Int? = nil, on wire: PostgresWire) async throws -> PostgresRows {
        try await PostgresPipeline(wire: wire).run(statements, resultIndex: resultIndex, plan: plan(for:), prepared: { prepared[$0] = $1 })
    }

    /// Runs `query`, then `script` (statements without parameters, as for `deferScript`) in
    /// the same round trip, and returns the query's rows; if the query fails, the script does
    /// not run. In a transaction, `followedBy: "COMMIT"` ends it with its one read: a
    /// transaction in a single trip. (`PostgresPool.withTransaction` sees that it ended; a
    /// connection lost on the way is taken as a body that failed, and the body runs again:
    /// for reads, and writes whose effects a lost COMMIT may repeat.)
    @discardableResult
    public func query(_ query: PostgresQuery, followedBy script: String) async throws -> PostgresRows {
        let after = PendingStatement.statements(of: script)
        return try await withHandle { [self] wire, ahead in
            if after.contains(where: { if case .script = $0 { true } else { false } }) {
                throw PostgresError(kind: .unsupported, message: "a script that follows a query must split into statements", query: script)
            }
            return try await pipeline(ahead + [.query(query)] + after, resultIndex: ahead.count, on: wire)
        }
    }

    /// Whether the connection is outside a transaction block with nothing waiting to be sent
    /// (as it was after its last call).
    public var isIdle: Bool {
        outsideTransaction.withLock { $0 } && pending.withLock { $0.isEmpty }
    }

    /// Whether statements wait to go ahead of the next call (`deferScript`, `enqueue`).
    public var hasPending: Bool { pending.withLock { !$0.isEmpty } }

    /// Sends the statements that wait for the next call, on a round trip of their own (none
    /// if nothing waits).
    public func sendPending() async throws {
        try await withHandle { [self] wire, ahead in
            if !ahead.isEmpty { _ = try await pipeline(ahead, on: wire) }
        }
    }

    /// How `query` runs on this connection: under the name it was prepared with, prepared
    /// now under a new name, or unprepared once `preparedLimit` statements are kept.
    /// (Holding the connection's turn.)
    private func plan(for query: PostgresQuery) -> PostgresPipeline.Plan {
        let key = PreparedStatementKey(sql: query.sql, types: query.binds.types.map { Oid($0.rawValue) })
        if let name = prepared[key] { return .prepared(name: name) }
        guard prepared.count < Self.preparedLimit else { return .unprepared }
        defer { nextPreparedNumber += 1 }
        return .prepare(name: "herald_\(nextPreparedNumber)", key: key)
    }

    /// Runs SQL text that may hold several statements, with no parameters (simple protocol).
    /// Only for text the program wrote itself, such as migration files.
    public func executeScript(_ sql: String) async throws {
        try await withHandle { [self] wire, ahead in
            if !ahead.isEmpty { _ = try await pipeline(ahead, on: wire) }
            try await Self.runScript(sql, on: wire)
        }
    }

    /// Runs `sql` with the simple protocol (several statements in one message) and reads
    /// every result; the first error is thrown once the server is done with the text.
    private static func runScript(_ sql: String, on wire: PostgresWire) async throws {
        let query = String(sql.prefix(200))
        guard PQsendQuery(wire.handle, sql) == 1 else { throw wire.lost(query) }
        try await wire.flush()
        var firstError: (any Error)?
        while let result = try await wire.nextResult() {
            do {
                _ = try rows(from: result, connection: wire.handle, query: query)
            } catch let error as PostgresError where error.kind != .connection {
                firstError = firstError ?? error
            }
        }
        if PQstatus(wire.handle) != CONNECTION_OK { throw wire.lost(query) }
        if let firstError { throw firstError }
    }

    /// Sends `sql` (statements separated by `;`, program-written, as for `executeScript`)
    /// ahead of the next call on this connection, in the same round trip: `BEGIN` or a
    /// transaction's `SET LOCAL`s then cost no trip of their own. Several run in order. If one
    /// fails, the next call throws its error and its own statement does not run.
    public func deferScript(_ sql: String) {
        let statements = PendingStatement.statements(of: sql)
        pending.withLock { $0.append(contentsOf: statements) }
    }

    /// Sends `query` ahead of the next call on this connection, in the same round trip, for
    /// a statement whose result nobody reads (an insert whose only failure is a failure of
    /// the whole transaction). Its error, if any, is thrown by the next call (which does not
    /// run then). A transaction's `COMMIT` is such a call.
    public func enqueue(_ query: PostgresQuery) {
        pending.withLock { $0.append(.query(query)) }
    }

    /// Forgets the statements `enqueue` holds for the next call (a transaction that is to be
    /// rolled back need not run them first); `deferScript`'s stay.
    public func discardEnqueued() {
        pending.withLock { pending in
            pending.removeAll { if case .query = $0 { true } else { false } }
        }
    }

    /// Closes the connection. Safe to call twice.
    public func close() async {
        await turnstile.enter()
        if let handle {
            let socket = PQsocket(handle)  // -1 once libpq has closed it itself
            if socket >= 0 { PostgresPoller.shared.forget(socket) }
            PQfinish(handle)
        }
        handle = nil
        notices?.release()
        notices = nil
        broken.withLock { $0 = true }
        turnstile.leave()
    }

    /// Runs `body` with the statements pending for this call, once the calls before it are
    /// done.
    private func withHandle<Result>(
        _ body: (PostgresWire, [PendingStatement]) async throws -> Result
    ) async throws -> Result {
        let taken = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        await turnstile.enter()
        defer { turnstile.leave() }
        guard let handle else {
            throw PostgresError(kind: .connection, message: "connection is closed")
        }
        let wire = PostgresWire(handle: handle)
        defer {
            if PQstatus(handle) != CONNECTION_OK { broken.withLock { $0 = true } }
            let outside = PQtransactionStatus(handle) == PQTRANS_IDLE
            outsideTransaction.withLock { $0 = outside }
        }
        do {
            // Text that could not be split into statements runs on a trip of its own, in
            // its place; what follows the last such text goes with the call.
            var ahead = taken[...]
            while let index = ahead.firstIndex(where: { if case .script = $0 { true } else { false } }) {
                if index > ahead.startIndex { _ = try await pipeline(Array(ahead[..<index]), on: wire) }
                if case .script(let script) = ahead[index] { try await Self.runScript(script, on: wire) }
                ahead = ahead[(index + 1)...]
            }
            return try await body(wire, Array(ahead))
        } catch let error as PostgresError where error.isReadOnlyServer || error.kind == .connection {
            // The server stopped being a primary under this connection (a failover), or
            // the connection failed: whatever the pool lends next must come from a new one.
            broken.withLock { $0 = true }
            throw error
        }
    }
}

/// Where a connection's NOTICE messages go: the debug log, never stderr.
final class NoticeSink: Sendable {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }
}
