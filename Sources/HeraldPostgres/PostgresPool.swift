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
    let logger: Logger
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
