import HeraldPostgres

/// A database problem described in one line for the user.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Turns a failure to reach an external server into one line that says what to check.
public func explainingConnectionFailures<Result>(_ body: () async throws -> Result) async throws -> Result {
    do {
        return try await body()
    } catch let error as PostgresError where error.isConnectionFailure {
        throw DatabaseError("\(error.message); check HERALD_DATABASE_URL and that the server is running")
    }
}
