/// Why the embedded PostgreSQL cluster could not be managed; each description is one line
/// that says what to do about it.
public struct EmbeddedClusterError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }

    static func homeNotWritable(_ path: String, _ reason: String) -> Self {
        .init("HERALD_HOME \(path) is not writable (\(reason)); set HERALD_HOME to a folder you can write, or fix its permissions")
    }

    static func binariesMissing(_ searched: String) -> Self {
        .init(
            "initdb and pg_ctl were not found (\(searched)); install PostgreSQL (apt-get install postgresql), set HERALD_PG_BIN to their folder, or set HERALD_DATABASE_URL to use a server of your own"
        )
    }

    static var noServerAccount: Self {
        .init(
            "PostgreSQL refuses to run as root and there is no 'postgres' account to run it; install postgresql (it creates one), set HERALD_PG_USER, or run herald as a normal user"
        )
    }

    static func noSuchServerAccount(_ name: String) -> Self {
        .init(
            "HERALD_PG_USER names the account \(name), which does not exist; name an existing unprivileged account (such as postgres) to run the embedded PostgreSQL"
        )
    }

    static func pathTooLong(_ path: String) -> Self {
        .init("the socket path \(path) is too long for a Unix socket; use a shorter HERALD_HOME")
    }

    static func commandFailed(_ command: String, _ output: String) -> Self {
        .init("\(command) failed: \(output)")
    }

    public static var external: Self {
        .init("HERALD_DATABASE_URL is set, so herald does not manage that server; unset it to use the embedded cluster")
    }
}
