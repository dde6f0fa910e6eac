/// Why migrations could not be applied. Each description is one line that says what to do.
public struct MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Reason: Sendable, Equatable {
        case badFileName(String)
        case duplicateVersion(String, String)
        case checksumMismatch(String)
        case unknownApplied(version: Int, name: String)
        case failed(String, String)
        case pending([String])
    }

    private let reason: Reason

    static func badFileName(_ name: String) -> Self { .init(reason: .badFileName(name)) }
    static func duplicateVersion(_ first: String, _ second: String) -> Self { .init(reason: .duplicateVersion(first, second)) }
    static func checksumMismatch(_ file: String) -> Self { .init(reason: .checksumMismatch(file)) }
    static func unknownApplied(version: Int, name: String) -> Self { .init(reason: .unknownApplied(version: version, name: name)) }
    static func failed(_ file: String, _ message: String) -> Self { .init(reason: .failed(file, message)) }
    static func pending(_ files: [String]) -> Self { .init(reason: .pending(files)) }

    /// The migration file changed after it was applied.
    public var isChecksumMismatch: Bool {
        if case .checksumMismatch = reason { return true }
        return false
    }

    /// The database lacks migrations this binary ships.
    public var isPending: Bool {
        if case .pending = reason { return true }
        return false
    }

    public var description: String {
        switch reason {
        case .badFileName(let name):
            "migration file \(name) is not named NNNN_name.sql"
        case .duplicateVersion(let first, let second):
            "migrations \(first) and \(second) share a version number"
        case .checksumMismatch(let file):
            "migration \(file) was changed after it was applied; restore the applied text and add a new migration instead"
        case .unknownApplied(let version, let name):
            "the database has migration \(String(format: "%04d", version))_\(name) that this herald does not know; use a newer herald"
        case .failed(let file, let message):
            "migration \(file) failed and was rolled back: \(message)"
        case .pending(let files):
            "the database schema is behind (\(files.joined(separator: ", ")) not applied); run `herald db migrate`"
        }
    }
}
