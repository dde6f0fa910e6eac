/// A failure reported by libpq, the server, the pool, or row decoding.
///
/// `description` is safe to show to a user: it never contains query parameters or the
/// server's `DETAIL` line (which may quote row values). `debugDescription` has everything.
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What part of the stack failed; new kinds may be added.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connection, server, decoding, poolClosed, invalidConfiguration, unsupported, commitUnknown
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The connection could not be made, or it broke.
        public static var connection: Self { .init(.connection) }
        /// The server answered a statement with an error (see `sqlState`).
        public static var server: Self { .init(.server) }
        /// A value could not be decoded into the requested Swift type.
        public static var decoding: Self { .init(.decoding) }
        /// The pool was closed while the caller waited or after it closed.
        public static var poolClosed: Self { .init(.poolClosed) }
        /// The connection string could not be parsed.
        public static var invalidConfiguration: Self { .init(.invalidConfiguration) }
        /// The server answered with something this client does not handle (COPY, for one).
        public static var unsupported: Self { .init(.unsupported) }
        /// The connection was lost while `COMMIT` was on its way: the transaction may have
        /// committed or not, and nothing on this side can tell which.
        public static var commitUnknown: Self { .init(.commitUnknown) }

        public var description: String { base.rawValue }
    }

    public var kind: Kind
    /// The five-character SQLSTATE, when the server sent one.
    public var sqlState: String?
    /// The primary, human-readable message.
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    public var table: String?
    public var column: String?
    /// The SQL text (never its parameters), for debugging only.
    public var query: String?

    public init(
        kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil, hint: String? = nil,
        constraint: String? = nil, table: String? = nil, column: String? = nil, query: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
        self.query = query
    }

    /// `23505`: a unique constraint or index refused a duplicate.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `23503`: a foreign key refused the change.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    /// `23514`: a check constraint refused the change.
    public var isCheckViolation: Bool { sqlState == "23514" }
    /// `23502`: a NOT NULL column got a NULL.
    public var isNotNullViolation: Bool { sqlState == "23502" }
    /// `40001` / `40P01`: the transaction may succeed if retried.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// Whether the rows a statement wrote or read, not the server or the connection, are the
    /// likely cause: an SQLSTATE of class 22 (data exception), 23 (integrity constraint
    /// violation) or 54 (program limit exceeded), or a value that cannot be decoded. The same
    /// statement on the same rows fails the same way again; trying it forever would hold
    /// whatever waits behind it.
    public var isDataError: Bool {
        if kind == .decoding { return true }
        guard kind == .server, let state = sqlState, !isConnectionFailure else { return false }
        return ["22", "23", "54"].contains(state.prefix(2))
    }
    /// The connection is gone (class 08, or the server shutting down or terminating it), or
    /// it leads to a server that no longer takes writes (`25006` after a failover demoted it).
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let state = sqlState else { return false }
        return state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03" || isReadOnlyServer
    }

    /// The server is short of something it needs to do any work, whatever the rows: class 53
    /// (`53100` disk full, `53200` out of memory, `53300` too many connections), or a
    /// connection refused because every slot is taken (which libpq reports without an
    /// SQLSTATE). It passes when the shortage does; the same work may then succeed.
    public var isResourceShortage: Bool {
        if sqlState?.hasPrefix("53") ?? false { return true }
        return kind == .connection && Self.noSlotMessages.contains { message.contains($0) }
    }

    /// What the server says when it refuses a connection for want of a slot.
    static let noSlotMessages = ["too many clients already", "remaining connection slots are reserved", "too many connections"]

    /// The error for a `COMMIT` that went unanswered (`.commitUnknown`).
    /// - Parameter detail: what the connection said, if anything.
    public static func commitUnknown(detail: String? = nil) -> PostgresError {
        PostgresError(
            kind: .commitUnknown, message: "the connection to PostgreSQL was lost during COMMIT: the change may or may not be saved",
            detail: detail)
    }

    /// `25006`: a write reached a server (or session) that is read-only, such as a primary
    /// that a failover turned into a standby while this connection stayed open.
    public var isReadOnlyServer: Bool { sqlState == "25006" }

    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        return text
    }

    public var debugDescription: String {
        var parts = ["PostgresError(kind: \(kind)", "message: \(message)"]
        if let sqlState { parts.append("sqlState: \(sqlState)") }
        if let detail { parts.append("detail: \(detail)") }
        if let hint { parts.append("hint: \(hint)") }
        if let constraint { parts.append("constraint: \(constraint)") }
        if let table { parts.append("table: \(table)") }
        if let column { parts.append("column: \(column)") }
        if let query { parts.append("query: \(query)") }
        return parts.joined(separator: ", ") + ")"
    }
}
