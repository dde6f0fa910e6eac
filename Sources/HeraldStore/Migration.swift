import Crypto
import Foundation

/// One numbered schema change: `sql/NNNN_name.sql`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let sql: String

    /// The file name this migration came from.
    public var fileName: String { String(format: "%04d_%@.sql", version, name) }

    /// SHA-256 of the file's text, hex: what the database records and later compares.
    public var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Parses `NNNN_name.sql`.
    /// - Throws: `MigrationError` naming the file when the name does not fit.
    public init(fileName: String, sql: String) throws {
        let base = fileName.hasSuffix(".sql") ? String(fileName.dropLast(4)) : ""
        let parts = base.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, parts[0].count >= 4, parts[0].allSatisfy(\.isASCIIDigit), let version = Int(parts[0]),
            !parts[1].isEmpty
        else {
            throw MigrationError.badFileName(fileName)
        }
        self.init(version: version, name: String(parts[1]), sql: sql)
    }

    /// Every migration shipped in `sql/`, in order.
    public static var bundled: [Migration] {
        get throws { try ordered(EmbeddedFiles.sql) }
    }

    /// The `.sql` files of a folder, in order (for tests and for running from a checkout).
    public static func load(directory: URL) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var files: [String: String] = [:]
        for name in names where name.hasSuffix(".sql") {
            files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return try ordered(files)
    }

    static func ordered(_ files: [String: String]) throws -> [Migration] {
        let migrations = try files.filter { $0.key.hasSuffix(".sql") }.map { try Migration(fileName: $0.key, sql: $0.value) }
            .sorted { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(previous.fileName, next.fileName)
        }
        return migrations
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
