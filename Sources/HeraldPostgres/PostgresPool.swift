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
    public init(configuration: PostgresConfiguration, size: Int = 8, logger: Logger) {
        self.configuration = configuration
        self.size = max(1, size)
        self.logger = logger
        self.state = Mutex(State())
    }

    /// Lends a connection to `body`, then takes it back.
    /// - Throws: whatever `body` throws; `PostgresError` if no connection can be opened.
    @discardableResult
    public func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        let connection = try await acquire()
        do {
            let result = try await body(connection)
            await release(connection)
            return result
        } catch {
            await release(connection)
            throw error
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Parameter setup: statements run right after `BEGIN` in the same round trip, such as
    ///   `SET LOCAL …`. Program-written SQL only: it is sent as text, without parameters.
    @discardableResult
    public func withTransaction<Result>(setup: String? = nil, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await withConnection { connection in
            // Sent with the body's first statement (one trip to the connection's thread fewer).
            connection.deferScript(setup.map { "BEGIN; " + $0 } ?? "BEGIN")
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                do {
                    try await connection.query("ROLLBACK")
                } catch let rollbackError {
                    // The connection is in an unknown state: make sure it is not reused.
                    logger.warning("rollback failed", metadata: ["error": "\(rollbackError)"])
                    await connection.close()
                }
                throw error
            }
            try await connection.query("COMMIT")
            return result
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

    private func release(_ connection: PostgresConnection) async {
        if connection.isBroken {
            await discard(connection)
            return
        }
        let (waiter, closeIt) = state.withLock { state -> (Waiter?, Bool) in
            if state.closed {
                state.open -= 1
                return (nil, true)
            }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.idle.append(connection)
            return (nil, false)
        }
        if closeIt { await connection.close() }
        waiter?.continuation.resume(returning: connection)
    }

    private func discard(_ connection: PostgresConnection) async {
        logger.debug("dropping a broken connection", metadata: ["postgres.pid": "\(connection.backendPID)"])
        await connection.close()
        slotFreed()
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
