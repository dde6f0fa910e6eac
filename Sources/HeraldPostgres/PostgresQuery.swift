import Foundation

/// SQL text plus its bound parameters.
///
/// Built by string interpolation: every interpolated value becomes `$n` and a bind, so
/// values never reach the SQL text.
/// ```swift
/// let rows = try await connection.query("SELECT id FROM people WHERE email = \(email)")
/// ```
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var sql: String
    public private(set) var binds: PostgresBindings
    /// Whether the server sends the rows in its binary format (see `inBinary`).
    public private(set) var binaryResults = false

    /// SQL the caller vouches for, with binds it numbered itself.
    public init(unsafeSQL sql: String, binds: PostgresBindings = .init()) {
        self.sql = sql
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, binds: stringInterpolation.binds)
    }

    /// The same statement, its rows sent in PostgreSQL's binary format: an id is 16 bytes and
    /// an instant 8, neither written out as text by the server nor parsed back here. For
    /// statements whose columns are all of the types `PostgresDecodable` reads in binary (text,
    /// uuid, bool, int2/4/8, timestamptz; see `decode(postgresBinary:type:)`).
    public var inBinary: PostgresQuery {
        var query = self
        query.binaryResults = true
        return query
    }

    /// The SQL with its placeholders; parameters are never printed.
    public var description: String { sql }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var binds = PostgresBindings()

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql.append(literal)
        }

        /// Appends `$n` and binds `value`.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            binds.append(value)
            sql.append("$\(binds.count)")
        }

        /// Appends `$n` and binds `value`, or NULL when it is `nil`.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            binds.append(value)
            sql.append("$\(binds.count)")
        }

        /// Appends ` AND <condition> $n` and binds `value` when there is one, and nothing when
        /// it is nil: `WHERE a.tenant_id = \(id)\(and: "a.team_id =", team)`. An optional
        /// filter written this way keeps its statement's plan cacheable, where
        /// `($n IS NULL OR a.team_id = $n)` made PostgreSQL plan it again on every execution.
        /// `condition` is SQL the program wrote, never input.
        public mutating func appendInterpolation<Value: PostgresEncodable>(and condition: String, _ value: Value?) {
            guard let value else { return }
            sql.append(" AND \(condition) ")
            appendInterpolation(value)
        }

        /// Appends `LIMIT <count>` with the number in the statement's text, not bound: with
        /// `LIMIT $n`, the plan PostgreSQL would cache assumes a tenth of the table's rows,
        /// looks dearer than any plan made for the value at hand, and so is never chosen; the
        /// statement was planned again on every run (a page of 50 activities: 330 µs of the
        /// server's time where the cached plan takes 115). Each count is a statement of its
        /// own on a connection, so a count comes from the program or a bounded input (the
        /// API's 1–200), never from unbounded input. - Precondition: `count` ≥ 0.
        public mutating func appendInterpolation(limit count: Int) {
            sql.append("LIMIT \(max(0, count))")
        }

        /// Appends a quoted identifier (a table or channel name), doubling embedded quotes.
        public mutating func appendInterpolation(identifier: String) {
            sql.append(PostgresQuery.quoteIdentifier(identifier))
        }

        /// Appends SQL text as is. Only for text the program itself wrote, never for input.
        public mutating func appendInterpolation(unsafeRaw text: String) {
            sql.append(text)
        }
    }

    /// Quotes an identifier for PostgreSQL: `a"b` becomes `"a""b"`.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The parameters of a query, in PostgreSQL's text format.
public struct PostgresBindings: Sendable {
    public private(set) var values: [String?] = []
    public private(set) var types: [PostgresType] = []

    public init() {}

    public var count: Int { values.count }

    public mutating func append<Value: PostgresEncodable>(_ value: Value) {
        values.append(value.postgresText)
        types.append(Value.postgresType)
    }
}
