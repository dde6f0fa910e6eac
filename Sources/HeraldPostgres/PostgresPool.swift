import CoreMetrics
import Logging
import Synchronization

/// A fixed-size pool of connections, lent only for the length of a closure.
///
/// Connections are opened on demand up to `size`. A connection that libpq reports broken is
/// closed when it comes back, and a new one is opened for the next caller, so the pool
/// recovers by itself once the server is reachable again.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    public let size: Int
    /// How long `withTransaction` keeps running a transaction again after its connection
    /// failed: long enough for a failover to promote a standby.
    public let failoverWindow: Duration
    /// What the database refused lately, shared with the pools made from this one's store.
    public let trouble: DatabaseTrouble
    private let logger: Logger
    private let state: Mutex<State>
    /// `herald_db_pool_wait_seconds`: how long callers waited for a connection when every
    /// one was lent (its count is the number of waits).
    private let waits = CoreMetrics.Timer(label: "herald_db_pool_wait_seconds", preferredDisplayUnit: .seconds)

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<PostgresConnection?, any Error>
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        var closed = false
    }

    /// - Parameters:
    ///   - size: the most connections open at once (at least 1).
    ///   - trouble: where failures are counted and remembered (a new record by default).
    public init(
        configuration: PostgresConfiguration, size: Int = 8, failoverWindow: Duration = .seconds(15), trouble: DatabaseTrouble = DatabaseTrouble(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.trouble = trouble
        self.size = max(1, size)
        self.failoverWindow = failoverWindow
        self.logger = logger
        self.state = Mutex(State())
    }

    /// Lends a connection to `body`, then takes it back.
    /// - Throws: whatever `body` throws; `PostgresError` if no connection can be opened.
    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let connection: PostgresConnection
        do {
            connection = try await acquire()
        } catch {
            trouble.note(error)
            throw error
        }
        do {
            let result = try await body(connection)
            await release(connection)
            return result
        } catch {
            trouble.note(error)
            await release(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// A transaction whose connection fails before `COMMIT` (the server went away, a failover
    /// moved the primary) committed nothing, so `body` runs again on a new connection, for up
    /// to `failoverWindow` after the first failure: `body` must keep its effects inside the
    /// transaction. A database that cannot be reached at the first try fails at once.
    ///
    /// If the connection fails while `COMMIT` is on its way, the outcome is unknown.
    /// `resolveCommit` is then asked, on a new connection, whether the transaction committed
    /// (it can tell by looking for a row the transaction wrote, having waited out the old
    /// transaction on the same server): `true` returns `body`'s result, `false` runs `body`
    /// again. Without a resolver (or when it throws), the error is `.commitUnknown`.
    /// - Parameters:
    ///   - setup: statements run right after `BEGIN` in the same round trip, such as
    ///   `SET LOCAL …`. Program-written SQL only: it is sent as text, without parameters.
    ///   - readOnly: `BEGIN READ ONLY`, and no round trip for its `COMMIT`: a transaction that
    ///     wrote nothing has nothing to lose, so its `COMMIT` goes ahead of the connection's
    ///     next call, in that call's round trip (or, when no one waits for the connection, at
    ///     once as it comes back: see `release`).
    @discardableResult
    public func withTransaction<Result>(
        setup: String? = nil, readOnly: Bool = false, resolveCommit: ((PostgresConnection) async throws -> Bool)? = nil,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var firstFailure: ContinuousClock.Instant?
        var failures = 0
        while true {
            var connected = false
            let outcome: TransactionOutcome<Result>
            do {
                outcome = try await withConnection { connection in
                    connected = true
                    return try await transaction(on: connection, setup: setup, readOnly: readOnly, body)
                }
            } catch let error as PostgresError where error.isConnectionFailure {
                // A database that cannot be reached at the first try fails at once; one that
                // was there and went away may come back (a failover) within the window.
                guard connected || firstFailure != nil else { throw error }
                let first = firstFailure ?? .now
                firstFailure = first
                guard first.duration(to: .now) < failoverWindow else { throw error }
                failures += 1
                logger.notice("a transaction lost its connection; running it again", metadata: ["error": "\(error)", "try": "\(failures)"])
                try await Task.sleep(for: Self.pause(after: failures))
                continue
            }
            switch outcome {
            case .committed(let result):
                return result
            case .unknown(let result, let commitError):
                trouble.note(commitError)
                guard let resolveCommit else { throw commitError }
                logger.warning("the connection was lost during COMMIT; finding out whether it committed", metadata: ["error": "\(commitError)"])
                let committed: Bool
                do {
                    committed = try await resolveOnNewConnection(resolveCommit)
                } catch {
                    logger.error("could not find out whether a transaction committed", metadata: ["error": "\(error)"])
                    throw commitError
                }
                if committed { return result }
                logger.notice("the transaction did not commit; running it again")
                firstFailure = firstFailure ?? .now
            }
        }
    }

    private enum TransactionOutcome<Result> {
        case committed(Result)
        /// The connection failed during COMMIT (the error is `.commitUnknown`).
        case unknown(Result, PostgresError)
    }

    private func transaction<Result>(
        on connection: PostgresConnection, setup: String?, readOnly: Bool, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> TransactionOutcome<Result> {
        // Sent with the body's first statement (one round trip fewer).
        let begin = readOnly ? "BEGIN READ ONLY" : "BEGIN"
        connection.deferScript(setup.map { "\(begin); " + $0 } ?? begin)
        let result: Result
        do {
            result = try await body(connection)
        } catch {
            // What the body enqueued need not run before the rollback.
            connection.discardEnqueued()
            await rollBack(connection)
            if readOnly, let refused = error as? PostgresError, refused.isReadOnlyServer {
                // The program's own mistake, not a server demoted by a failover: not run again.
                throw PostgresError(kind: .unsupported, message: "a read-only transaction cannot write: \(refused.message)", query: refused.query)
            }
            throw error
        }
        // A body may have ended the transaction with its last statement (`query(_:followedBy:)`).
        if connection.isIdle { return .committed(result) }
        if readOnly && !connection.hasPending {
            connection.deferScript("COMMIT")
            return .committed(result)
        }
        do {
            // The statements the body enqueued go with it, in the same round trip.
            try await connection.query("COMMIT")
        } catch let error as PostgresError where error.isConnectionFailure {
            // It may have committed: a backend told to stop while it waited for a synchronous
            // standby says so after committing locally, and no answer at all says nothing.
            return .unknown(result, .commitUnknown(detail: error.message))
        } catch {
            // An enqueued statement failed, and COMMIT did not run: the transaction is still
            // open, aborted. (A COMMIT that failed itself has ended it; the ROLLBACK then only
            // draws a notice.)
            await rollBack(connection)
            throw error
        }
        return .committed(result)
    }

    private func rollBack(_ connection: PostgresConnection) async {
        do {
            try await connection.query("ROLLBACK")
        } catch let rollbackError {
            // The connection is in an unknown state: make sure it is not reused.
            logger.warning("rollback failed", metadata: ["error": "\(rollbackError)"])
            await connection.close()
        }
    }

    /// Runs `resolve` on a connection of its own, waiting through a failover for one.
    private func resolveOnNewConnection(_ resolve: (PostgresConnection) async throws -> Bool) async throws -> Bool {
        let started = ContinuousClock.now
        var failures = 0
        while true {
            do {
                return try await withConnection { try await resolve($0) }
            } catch let error as PostgresError where error.isConnectionFailure && started.duration(to: .now) < failoverWindow {
                failures += 1
                try await Task.sleep(for: Self.pause(after: failures))
            }
        }
    }

    /// The wait before trying a lost connection's work again: 50 ms, doubling, at most 1 s.
    private static func pause(after failures: Int) -> Duration {
        .milliseconds(min(1_000, 25 << min(max(failures, 1), 6)))
    }

    /// Runs one statement on a pooled connection.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await withConnection { try await $0.query(query) }
    }

    /// Closes idle connections, fails waiting callers and refuses new ones; connections in
    /// use are closed as they come back.
    public func close() async {
        let (idle, waiters) = state.withLock { state in
            state.closed = true
            defer {
                state.idle.removeAll()
                state.waiters.removeAll()
            }
            state.open -= state.idle.count
            return (state.idle, state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: Self.closedError) }
        for connection in idle { await connection.close() }
    }

    /// Runs `body` with this pool, then closes the pool, whether `body` returned or threw.
    public func closing<Result>(after body: (PostgresPool) async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body(self)
        } catch {
            await close()
            throw error
        }
        await close()
        return result
    }

    /// Connections open now (idle or lent), for diagnostics and tests.
    public var openConnections: Int { state.withLock { $0.open } }

    private static var closedError: PostgresError {
        PostgresError(kind: .poolClosed, message: "the connection pool is closed")
    }

    private enum Next {
        case use(PostgresConnection)
        case open
        case wait
    }

    private func acquire() async throws -> PostgresConnection {
        while true {
            try Task.checkCancellation()
            let next = try state.withLock { state -> Next in
                if state.closed { throw Self.closedError }
                if let connection = state.idle.popLast() { return .use(connection) }
                if state.open < size {
                    state.open += 1
                    return .open
                }
                return .wait
            }
            switch next {
            case .use(let connection):
                if connection.isBroken {
                    await discard(connection)
                    continue
                }
                return connection
            case .open:
                do {
                    return try await PostgresConnection.connect(configuration, logger: logger)
                } catch {
                    slotFreed()
                    throw error
                }
            case .wait:
                let started = ContinuousClock.now
                let handedOver = try await waitForConnection()
                let waited = started.duration(to: .now).components
                waits.recordNanoseconds(waited.seconds * 1_000_000_000 + waited.attoseconds / 1_000_000_000)
                if let handedOver { return handedOver }
            // nil: a slot was freed; loop to open a connection in it.
            }
        }
    }

    /// Parks the caller until a connection is handed over (or a slot frees, `nil`).
    private func waitForConnection() async throws -> PostgresConnection? {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let enqueued = state.withLock { state -> Bool in
                    if state.closed || Task.isCancelled { return false }
                    // A slot may have freed between the check and now.
                    if let connection = state.idle.popLast() {
                        continuation.resume(returning: connection)
                        return true
                    }
                    if state.open < size {
                        continuation.resume(returning: nil)
                        return true
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return true
                }
                if !enqueued {
                    continuation.resume(throwing: Task.isCancelled ? CancellationError() : Self.closedError)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Takes a connection back: to the first caller waiting for one, else among the idle
    /// ones. A connection that holds statements for its next call (a read-only transaction's
    /// `COMMIT`) goes to a waiter as it is, its next call sending them; with no one waiting,
    /// they are sent now, so that an idle connection holds no transaction (and no lock).
    private func release(_ connection: PostgresConnection) async {
        while true {
            if connection.isBroken {
                await discard(connection)
                return
            }
            let pendingFirst = connection.hasPending
            let (waiter, next) = state.withLock { state -> (Waiter?, ReleaseStep) in
                if state.closed {
                    state.open -= 1
                    return (nil, .close)
                }
                if !state.waiters.isEmpty { return (state.waiters.removeFirst(), .handedOver) }
                if pendingFirst { return (nil, .sendPending) }
                state.idle.append(connection)
                return (nil, .handedOver)
            }
            switch next {
            case .close: await connection.close()
            case .handedOver: waiter?.continuation.resume(returning: connection)
            case .sendPending:
                do {
                    try await connection.sendPending()
                } catch {
                    // A statement the program wrote failed: the connection's state is unknown.
                    logger.warning("a connection's pending statements failed as it came back", metadata: ["error": "\(error)"])
                    await connection.close()
                }
                continue
            }
            return
        }
    }

    private enum ReleaseStep {
        case handedOver
        case close
        case sendPending
    }

    /// Closes a broken connection, and with it the idle ones: they lead to the same server,
    /// which has most likely gone away too (a failover, a restart), and each would otherwise
    /// fail one caller before it is found out. Slots free up for new connections.
    private func discard(_ connection: PostgresConnection) async {
        logger.debug("dropping a broken connection", metadata: ["postgres.pid": "\(connection.backendPID)"])
        let idle = state.withLock { state in
            defer { state.idle.removeAll() }
            return state.idle
        }
        await connection.close()
        slotFreed()
        for other in idle {
            await other.close()
            slotFreed()
        }
    }

    /// A slot opened up: wake one waiter so it opens a connection in it.
    private func slotFreed() {
        let waiter = state.withLock { state -> Waiter? in
            state.open -= 1
            return state.waiters.isEmpty ? nil : state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: nil)
    }
}
