import CLibPQ
import Foundation

/// Where and how to connect: a libpq URI (`postgresql://…`) or conninfo string
/// (`host=… dbname=…`). Anything it leaves out comes from the `PG*` environment variables
/// and `.pgpass`, exactly as with `psql`.
public struct PostgresConfiguration: Sendable {
    public let connectionString: String
    /// Sent as `fallback_application_name`, so one in the connection string wins.
    public var applicationName: String
    /// Seconds to wait for a connection, unless the connection string sets `connect_timeout`.
    public var connectTimeout: Int
    /// SQL run once on every new connection before it is used (for example `SET ROLE …`).
    public var sessionSetup: String?

    /// Validates the string with libpq's own parser.
    /// - Throws: `PostgresError` of kind `.invalidConfiguration` naming what libpq disliked.
    public init(_ connectionString: String, applicationName: String = "herald", connectTimeout: Int = 10) throws {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
        _ = try Self.parse(connectionString)
    }

    /// The same server and credentials, another database.
    public func with(database: String) throws -> PostgresConfiguration {
        var options = try Self.parse(connectionString)
        options["dbname"] = database
        let conninfo = options.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoteConninfoValue($0.value))" }
            .joined(separator: " ")
        var result = try PostgresConfiguration(conninfo, applicationName: applicationName, connectTimeout: connectTimeout)
        result.sessionSetup = sessionSetup
        return result
    }

    /// The same configuration, running `sql` on every new connection.
    public func with(sessionSetup sql: String) -> PostgresConfiguration {
        var result = self
        result.sessionSetup = sql
        return result
    }

    /// The database the string names (`dbname`), if it names one.
    public var database: String? {
        (try? Self.parse(connectionString))?["dbname"]
    }

    /// Host, port, database and user, never the password: for messages.
    public var redacted: String {
        guard let options = try? Self.parse(connectionString) else { return "(invalid)" }
        let shown = ["host", "hostaddr", "port", "dbname", "user"]
        let parts = shown.compactMap { key in options[key].map { "\(key)=\($0)" } }
        return parts.isEmpty ? "(libpq defaults)" : parts.joined(separator: " ")
    }

    /// The options the string sets explicitly.
    static func parse(_ connectionString: String) throws -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            var message = "invalid database connection string"
            if let errorMessage {
                message += ": " + String(cString: errorMessage).trimmingTrailingNewlines()
                PQfreemem(errorMessage)
            }
            throw PostgresError(kind: .invalidConfiguration, message: message)
        }
        defer { PQconninfoFree(options) }
        var result: [String: String] = [:]
        var cursor = options
        while let keyword = cursor.pointee.keyword {
            if let value = cursor.pointee.val {
                result[String(cString: keyword)] = String(cString: value)
            }
            cursor += 1
        }
        return result
    }

    /// Quotes a value for a conninfo string: `a b` becomes `'a b'`.
    public static func quoteConninfoValue(_ value: String) -> String {
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        return "'\(escaped)'"
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text = text.dropLast() }
        return String(text)
    }
}
