import Foundation

/// A message the app sent that the server has not acknowledged yet: shown at once (status
/// `pending`), kept through the app's restart, sent in order when the server can be reached.
public struct PendingMessage: Codable, Sendable, Hashable, Identifiable {
    /// Its id on the client and, once stored, `Message.clientId`: the server stores it once
    /// however often it is sent.
    public var clientId: String
    public var conversation: UUID
    public var text: String
    /// When the person sent it (the message's `sentAt`).
    public var createdAt: Date
    public var id: String { clientId }

    public init(clientId: String = UUID().uuidString.lowercased(), conversation: UUID, text: String, createdAt: Date = Date()) {
        self.clientId = clientId
        self.conversation = conversation
        self.text = text
        self.createdAt = createdAt
    }
}

/// Where the outbox keeps its messages.
public protocol OutboxStore: Sendable {
    func load() throws -> [PendingMessage]
    func save(_ messages: [PendingMessage]) throws
}

/// In a JSON file (the default), replaced atomically on every change.
public struct FileOutboxStore: OutboxStore {
    public let url: URL
    public init(url: URL) { self.url = url }

    /// `<Application Support>/HeraldKit/<name>.outbox.json` (Linux: `~/.local/share/HeraldKit`).
    public init(named name: String) {
        self.init(url: HeraldFiles.folder.appendingPathComponent("\(HeraldFiles.safe(name)).outbox.json"))
    }

    public func load() throws -> [PendingMessage] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try JSONDecoder().decode([PendingMessage].self, from: Data(contentsOf: url))
    }

    public func save(_ messages: [PendingMessage]) throws {
        // Foundation's own date encoding: the exact instant, read back equal.
        try HeraldFiles.write(try JSONEncoder().encode(messages), to: url)
    }
}

/// In memory: lost when the app ends.
public final class MemoryOutboxStore: OutboxStore, @unchecked Sendable {
    private let messages = Locked<[PendingMessage]>([])
    public init() {}
    public func load() throws -> [PendingMessage] { messages.current }
    public func save(_ messages: [PendingMessage]) throws { self.messages.withLock { $0 = messages } }
}

/// What became of a pending message.
public enum OutboxEvent: Sendable, Equatable {
    /// Stored by the server (once, whatever the retries).
    case sent(PendingMessage, Message)
    /// Refused for good (the conversation is gone, the text is invalid): not sent again.
    case failed(PendingMessage, HeraldError)
    /// The credential was refused: the outbox keeps its messages and waits for `flush()`
    /// after the person signed in again.
    case unauthorized
}
