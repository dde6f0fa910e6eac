import Foundation

/// A frame an app sends over the live channel (docs/live-protocol.md), parsed: pure, no I/O.
public enum LiveClientFrame: Sendable, Equatable {
    case ping
    /// The socket's screen: a conversation, or none.
    case viewing(UUID?)
    case received(conversation: UUID, sequence: Int64)
    case read(conversation: UUID, sequence: Int64)
    case typing(conversation: UUID)
    /// The app came to the foreground (true) or went to the background.
    case foreground(Bool)
    /// The people the socket follows besides its conversations (each an id or an email, at most
    /// `PresenceFollowing.maxSubscriptions`, no repeats): the whole list, replacing the last.
    case subscribePresence([String])

    /// Why a frame was refused: the `error` frame's `code` and `detail`.
    public struct Refusal: Error, Sendable, Equatable {
        public let code: String
        public let detail: String

        public init(_ code: String, _ detail: String) {
            self.code = code
            self.detail = detail
        }
    }

    /// The frame `text` holds, or why not: a field of the wrong type is named.
    public static func parse(_ text: String) -> Result<LiveClientFrame, Refusal> {
        guard case .object(let fields)? = JSONNode.parse(text) else {
            return .failure(Refusal("invalid_frame", "a frame is one JSON object with a string type"))
        }
        guard case .string(let type)? = fields["type"] else {
            return .failure(Refusal("invalid_frame", "type must be a string (\(fields["type"]?.kind ?? "it is missing"))"))
        }
        func conversation() -> Result<UUID, Refusal> {
            switch fields["conversation"] {
            case nil, .null?:
                return .failure(Refusal("invalid_frame", "\(type) needs conversation: the conversation's id"))
            case .string(let text)?:
                guard let id = UUID(uuidString: text) else { return .failure(Refusal("invalid_frame", "conversation is not a conversation's id")) }
                return .success(id)
            case let other?:
                return .failure(Refusal("invalid_frame", "conversation must be a string, a conversation's id (not \(other.kind))"))
            }
        }
        func sequence() -> Result<Int64, Refusal> {
            guard let field = fields["sequence"] else {
                return .failure(Refusal("invalid_frame", "\(type) needs sequence: a message's sequence, 0 or more"))
            }
            guard let sequence = field.integer, sequence >= 0 else {
                return .failure(Refusal("invalid_frame", "sequence must be a whole number, 0 or more (not \(Self.shown(field)))"))
            }
            return .success(sequence)
        }
        switch type {
        case "ping":
            return .success(.ping)
        case "viewing":
            switch fields["conversation"] {
            case nil: return .failure(Refusal("invalid_frame", "viewing needs conversation: an id, or null for none"))
            case .null?: return .success(.viewing(nil))
            default: return conversation().map { .viewing($0) }
            }
        case "received":
            return conversation().flatMap { id in sequence().map { .received(conversation: id, sequence: $0) } }
        case "read":
            return conversation().flatMap { id in sequence().map { .read(conversation: id, sequence: $0) } }
        case "typing":
            return conversation().map { .typing(conversation: $0) }
        case "foreground":
            switch fields["value"] {
            case .bool(let value)?: return .success(.foreground(value))
            case nil: return .failure(Refusal("invalid_frame", "foreground needs value: true or false"))
            case let other?: return .failure(Refusal("invalid_frame", "value must be true or false (not \(other.kind))"))
            }
        case "presence.subscribe":
            return people(fields["people"])
        default:
            return .failure(
                Refusal(
                    "unknown_type",
                    "no frame type \(String(String.UnicodeScalarView(type.unicodeScalars.prefix(40)))); "
                        + "send ping, viewing, received, read, typing, foreground or presence.subscribe"))
        }
    }

    /// `presence.subscribe`'s list: strings (an id or an email each), at most
    /// `PresenceFollowing.maxSubscriptions` once repeats are dropped.
    private static func people(_ field: JSONNode?) -> Result<LiveClientFrame, Refusal> {
        guard case .array(let items)? = field else {
            return .failure(
                Refusal("invalid_frame", "presence.subscribe needs people: a list of ids or emails (not \(field?.kind ?? "missing"))"))
        }
        var people: [String] = []
        var seen: Set<String> = []
        for item in items {
            guard case .string(let text) = item else {
                return .failure(Refusal("invalid_frame", "people holds ids or emails, as strings (not \(item.kind))"))
            }
            let key = text.lowercased()
            if seen.insert(key).inserted { people.append(text) }
        }
        guard people.count <= PresenceFollowing.maxSubscriptions else {
            return .failure(
                Refusal(
                    "too_many",
                    "a socket follows at most \(PresenceFollowing.maxSubscriptions) people by subscription (\(people.count) named); "
                        + "the last list stays"))
        }
        return .success(.subscribePresence(people))
    }

    /// A number as it was sent, another value by its kind.
    private static func shown(_ value: JSONNode) -> String {
        if case .number(let text) = value { return String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) }
        return value.kind
    }
}
