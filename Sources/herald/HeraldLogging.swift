import Foundation
import HeraldCore
import Logging

/// A bad `HERALD_LOG_LEVEL` or `HERALD_LOG_FORMAT`.
struct HeraldLoggingError: Error, CustomStringConvertible {
    let description: String
}

/// Sets up swift-log from `HERALD_LOG_LEVEL` (trace … critical, default info) and
/// `HERALD_LOG_FORMAT` (`text` or `json`, default text). Logs go to stderr.
enum HeraldLogging {
    static func bootstrap(environment: [String: String]) throws {
        let levelName = environment["HERALD_LOG_LEVEL"].flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw HeraldLoggingError(description: "HERALD_LOG_LEVEL=\(levelName) is not one of \(names)")
        }
        let formatName = environment["HERALD_LOG_FORMAT"].flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? "text"
        guard let format = HeraldLogHandler.Format(rawValue: formatName) else {
            throw HeraldLoggingError(description: "HERALD_LOG_FORMAT=\(formatName) is not text or json")
        }
        LoggingSystem.bootstrap { label in
            var handler = HeraldLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
    }

    /// The logger commands use.
    static var logger: Logger { Logger(label: "herald") }
}

/// Writes one line per event to stderr, as text or as JSON.
struct HeraldLogHandler: LogHandler {
    enum Format: String { case text, json }

    let label: String
    let format: Format
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level = event.level
        let message = event.message
        let explicit = event.metadata
        var all = metadata
        if let explicit { all.merge(explicit) { $1 } }
        let timestamp = Date().formatted(.iso8601)
        let text: String
        switch format {
        case .text:
            let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\(TerminalText.escaped("\($0.value)", .singleLine))" }.joined(separator: " ")
            text = "\(timestamp) \(level) \(label): \(TerminalText.escaped(message.description, .singleLine))\(fields.isEmpty ? "" : " " + fields)\n"
        case .json:
            var object: [String: Any] = [:]
            for (key, value) in all { object[key] = "\(value)" }
            object["ts"] = timestamp
            object["level"] = level.rawValue
            object["logger"] = label
            object["msg"] = message.description
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            text = String(decoding: data, as: UTF8.self) + "\n"
        }
        FileHandle.standardError.write(Data(text.utf8))
    }
}
