import CoreMetrics
import Synchronization

/// What the database refused lately, for the pools that share it (a store's, and the pools
/// made from it for a dispatcher and background work). Each failure that says the server
/// cannot work now (not one that is the rows' fault) is counted in
/// `herald_db_errors_total{kind}` and the latest is remembered, so that readiness can say what
/// is wrong while it lasts, even when the failing work was a worker's and the probe's own read
/// succeeds (a full disk refuses writes, not reads).
public final class DatabaseTrouble: Sendable {
    /// What kind of trouble: the `kind` label of `herald_db_errors_total`.
    public enum Kind: String, Sendable, CaseIterable {
        /// The connection could not be made or broke (a restart, a failover, a network fault).
        case unreachable
        /// `53100`: the server could not extend a file.
        case diskFull = "disk_full"
        /// `53300`, or a connection refused for want of a slot: `max_connections` (or the
        /// role's connection limit) is reached.
        case tooManyConnections = "too_many_connections"
        /// Any other class 53 failure (out of memory, a temporary file over its limit, …).
        case outOfResources = "out_of_resources"
        /// The connection was lost during `COMMIT`.
        case commitUnknown = "commit_unknown"
    }

    /// One failure: its kind, the server's one-line message and when it happened.
    public struct Sighting: Sendable {
        public let kind: Kind
        public let message: String
        public let at: ContinuousClock.Instant
    }

    private let latest = Mutex<Sighting?>(nil)

    public init() {}

    /// The kind of trouble `error` reports, or nil when it is none of these (a constraint, a
    /// syntax error, a cancelled statement: the work's fault, not the server's state).
    public static func kind(of error: any Error) -> Kind? {
        guard let error = error as? PostgresError else { return nil }
        if error.kind == .commitUnknown { return .commitUnknown }
        if error.isResourceShortage {
            switch error.sqlState {
            case "53100": return .diskFull
            case "53300", nil: return .tooManyConnections
            default: return .outOfResources
            }
        }
        return error.isConnectionFailure ? .unreachable : nil
    }

    /// Counts and remembers `error` if it is trouble (`kind(of:)`); anything else is ignored.
    func note(_ error: any Error) {
        guard let kind = Self.kind(of: error), let error = error as? PostgresError else { return }
        Counter(label: "herald_db_errors_total", dimensions: [("kind", kind.rawValue)]).increment()
        latest.withLock { $0 = Sighting(kind: kind, message: error.description, at: .now) }
    }

    /// The latest trouble if it happened within `window` of now.
    public func latest(within window: Duration) -> Sighting? {
        latest.withLock { sighting in
            guard let sighting, sighting.at.duration(to: .now) <= window else { return nil }
            return sighting
        }
    }
}
