import Foundation

/// A frame an app sends over the live channel (DESIGN §17), parsed: pure, no I/O.
public enum LiveClientFrame: Sendable, Equatable {
    case ping
    /// The socket's screen: a conversation, or none.
    case viewing(UUID?)
    case received(conversation: UUID, sequence: Int64)
    case read(conversation: UUID, sequence: Int64)
    case typing(conversation: UUID)
    /// The app came to the foreground (true) or went to the background.
    case foreground(Bool)

    /// Why a frame was refused: the `error` frame's `code` and `detail`.
    public struct Refusal: Error, Sendable, Equatable {
        public let code: String
        public let detail: String

        public init(_ code: String, _ detail: String) {
            self.code = code
            self.detail = detail
        }
    }

    /// The frame `text` holds, or why not.
    public static func parse(_ text: String) -> Result<LiveClientFrame, Refusal> {
        guard let fields = try? JSONDecoder().decode(Fields.self, from: Data(text.utf8)) else {
            return .failure(Refusal("invalid_frame", "a frame is one JSON object with a string type"))
        }
        func conversation() -> Result<UUID, Refusal> {
            guard case .some(.some(let text)) = fields.conversation else {
                return .failure(Refusal("invalid_frame", "\(fields.type) needs conversation: the conversation's id"))
            }
            guard let id = UUID(uuidString: text) else { return .failure(Refusal("invalid_frame", "conversation is not a conversation's id")) }
            return .success(id)
        }
        func sequence() -> Result<Int64, Refusal> {
            guard let sequence = fields.sequence, sequence >= 0 else {
                return .failure(Refusal("invalid_frame", "\(fields.type) needs sequence: a message's sequence, 0 or more"))
            }
            return .success(sequence)
        }
        switch fields.type {
        case "ping":
            return .success(.ping)
        case "viewing":
            switch fields.conversation {
            case .none: return .failure(Refusal("invalid_frame", "viewing needs conversation: an id, or null for none"))
            case .some(.none): return .success(.viewing(nil))
            case .some(.some): return conversation().map { .viewing($0) }
            }
        case "received":
            return conversation().flatMap { id in sequence().map { .received(conversation: id, sequence: $0) } }
        case "read":
            return conversation().flatMap { id in sequence().map { .read(conversation: id, sequence: $0) } }
        case "typing":
            return conversation().map { .typing(conversation: $0) }
        case "foreground":
            guard let value = fields.value else { return .failure(Refusal("invalid_frame", "foreground needs value: true or false")) }
            return .success(.foreground(value))
        default:
            return .failure(
                Refusal(
                    "unknown_type",
                    "no frame type \(String(String.UnicodeScalarView(fields.type.unicodeScalars.prefix(40)))); "
                        + "send ping, viewing, received, read, typing or foreground"))
        }
    }

    /// The fields a client frame may carry. `conversation` tells absent from `null`.
    private struct Fields: Decodable {
        let type: String
        let conversation: String??
        let sequence: Int64?
        let value: Bool?

        enum CodingKeys: String, CodingKey { case type, conversation, sequence, value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            if container.contains(.conversation) {
                conversation = .some(try container.decodeNil(forKey: .conversation) ? nil : try container.decode(String.self, forKey: .conversation))
            } else {
                conversation = .none
            }
            sequence = try container.decodeIfPresent(Int64.self, forKey: .sequence)
            value = try container.decodeIfPresent(Bool.self, forKey: .value)
        }
    }
}
