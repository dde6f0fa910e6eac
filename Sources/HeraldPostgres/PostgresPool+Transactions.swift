import Logging

/// Transactions on a pooled connection: committed on return, rolled back on a throw, run
/// again through a failover, and read-only ones without a round trip for their `COMMIT`.
extension PostgresPool {
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

    fileprivate enum TransactionOutcome<Result> {
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
}
