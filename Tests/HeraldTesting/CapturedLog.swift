import Logging
import Synchronization

/// A logger whose lines a test reads back: every line at or above `level`, with its metadata.
public final class CapturedLog: Sendable {
    public struct Line: Sendable, CustomStringConvertible {
        public let level: Logger.Level
        public let message: String
        public let metadata: [String: String]

        public var description: String {
            "\(level) \(message) " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    private let captured = Mutex<[Line]>([])
    public let level: Logger.Level

    public init(level: Logger.Level = .info) {
        self.level = level
    }

    /// A logger that writes here.
    public var logger: Logger {
        var logger = Logger(label: "herald.test.captured") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    public var lines: [Line] { captured.withLock { $0 } }

    /// The lines whose message contains `text`.
    public func lines(containing text: String) -> [Line] {
        lines.filter { $0.message.contains(text) }
    }

    fileprivate func append(_ line: Line) {
        captured.withLock { $0.append(line) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Line(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
        }
    }
}
