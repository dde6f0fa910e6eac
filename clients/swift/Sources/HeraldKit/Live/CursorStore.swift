import Foundation

/// Where a live session keeps the cursor of the last frame it handed the app, so that the
/// next connection (after a drop, or the app's restart) resumes right after it.
public protocol CursorStore: Sendable {
    func load() -> String?
    func save(_ cursor: String)
}

/// In memory: a restart of the app starts from now (and reloads with REST).
public final class MemoryCursorStore: CursorStore, @unchecked Sendable {
    private let value: Locked<String?>
    public init(_ cursor: String? = nil) { value = Locked(cursor) }
    public func load() -> String? { value.current }
    public func save(_ cursor: String) { value.withLock { $0 = cursor } }
}

/// In a file (the default): one line, replaced atomically.
public struct FileCursorStore: CursorStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// `<Application Support>/HeraldKit/<name>.cursor` (on Linux, `~/.local/share/HeraldKit`):
    /// name it after the person, so that two people on one device keep theirs apart.
    public init(named name: String) {
        self.init(url: HeraldFiles.folder.appendingPathComponent("\(HeraldFiles.safe(name)).cursor"))
    }

    public func load() -> String? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    public func save(_ cursor: String) {
        try? HeraldFiles.write(Data(cursor.utf8), to: url)
    }
}

/// Where the library keeps its files.
enum HeraldFiles {
    static var folder: URL {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("HeraldKit", isDirectory: true)
    }

    /// A file name from any text: letters, digits, `.`, `-`, `_` and `@` kept, the rest `_`.
    static func safe(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { scalar in
                    (scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-@".unicodeScalars.contains(scalar))) ? scalar : "_"
                }))
    }

    /// Replaces the file's content at once (a crash leaves the old or the new, never half).
    static func write(_ data: Data, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }
}
