import HeraldCore
import HeraldPostgres

/// What the store tells its callers about the database beneath it: failures by kind, the
/// schema, the client library.
extension Store {
    /// Whether `error` says the database cannot be reached now (connection lost or refused,
    /// the server shutting down, a demoted primary, a COMMIT left unanswered): a surface
    /// answers 503 with `Retry-After`, not 500, and may be retried.
    public static func isUnavailable(_ error: any Error) -> Bool {
        isUnreachable(error) || isCommitOutcomeUnknown(error) || isShortOfResources(error)
    }

    /// The server is short of disk, memory or connection slots: nothing was saved, and the
    /// same work may succeed once the shortage passes.
    public static func isShortOfResources(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isResourceShortage ?? false
    }

    /// The database cannot be reached (connection lost or refused, the server shutting down,
    /// a demoted primary): nothing was saved.
    public static func isUnreachable(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isConnectionFailure ?? false
    }

    /// The connection was lost during COMMIT: whether the change was saved cannot be told.
    public static func isCommitOutcomeUnknown(_ error: any Error) -> Bool {
        (error as? PostgresError)?.kind == .commitUnknown
    }

    /// Whether the database refused the rows being written themselves (a constraint they
    /// break, a value out of range, one it cannot decode): the same write fails the same way
    /// every time, unlike a lost connection, a deadlock or a failover.
    public static func isRefusedData(_ error: any Error) -> Bool {
        (error as? PostgresError)?.isDataError ?? false
    }
}

extension Store {
    /// A database failure's one-line description (the server's message, its parameters and
    /// `DETAIL` left out), or nil when `error` is not one.
    public static func databaseFailure(_ error: any Error) -> String? {
        (error as? PostgresError).map(\.description)
    }

    /// Throws `MigrationError` unless every migration this binary knows is applied unchanged.
    public func verifySchema() async throws {
        try await Migrator.bundled().verify(pool)
    }

    /// Nil when the database answers with the schema this binary expects and has refused no
    /// work for want of disk, memory or connections in the last 10 s (to this store's pool or
    /// the pools made from it);
    /// otherwise why not.
    public func notReadyReason() async -> String? {
        do {
            try await verifySchema()
        } catch {
            // The kind only: `/readyz` answers without credentials, and the server's message
            // names hosts and files (the log has it).
            let kind = DatabaseTrouble.kind(of: error).map { " (\($0.rawValue))" } ?? ""
            return "the database is unreachable or its schema is not current" + kind
        }
        if let trouble = pool.trouble.latest(within: .seconds(10)), trouble.kind != .unreachable {
            let ago = trouble.at.duration(to: .now).components.seconds
            return "the database refused work \(ago) s ago: \(trouble.kind.rawValue)"
        }
        return nil
    }
}

extension Store {
    /// The version of libpq the store runs on, e.g. `15.18`.
    public static var libpqVersion: String { LibPQ.version }
}
