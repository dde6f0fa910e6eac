import Foundation

/// A frame from the server, read (docs/live-protocol.md, "Frames").
public enum ServerFrame: Sendable, Equatable {
    public struct Hello: Sendable, Equatable {
        public var person: String
        public var cursor: String
        /// Seconds between the server's pings.
        public var heartbeat: Int
        public init(person: String, cursor: String, heartbeat: Int) {
            self.person = person
            self.cursor = cursor
            self.heartbeat = heartbeat
        }
    }
    case hello(Hello)
    /// A durable frame: its cursor and what it says.
    case durable(cursor: String, LiveEvent)
    /// Not stored: typing, presence, badge, error, pong.
    case ephemeral(LiveEvent?)
    case resync(reason: String)

    /// Reads one text message; `nil` for what is not a frame of the protocol.
    public static func parse(_ text: String) -> ServerFrame? {
        let data = Data(text.utf8)
        guard let head = try? JSONCoding.decoder.decode(Head.self, from: data) else { return nil }
        let decoder = JSONCoding.decoder
        do {
            switch head.type {
            case "hello":
                let hello = try decoder.decode(HelloFrame.self, from: data)
                return .hello(Hello(person: hello.person, cursor: hello.cursor, heartbeat: hello.heartbeat))
            case "message":
                let frame = try decoder.decode(MessageFrame.self, from: data)
                return .durable(cursor: frame.cursor, .message(conversation: frame.conversation, message: frame.message))
            case "receipt":
                let frame = try decoder.decode(ReceiptFrame.self, from: data)
                return .durable(
                    cursor: frame.cursor,
                    .receipt(Receipt(conversation: frame.conversation, person: frame.person, received: frame.received, read: frame.read)))
            case "conversation":
                let frame = try decoder.decode(ConversationFrame.self, from: data)
                return .durable(cursor: frame.cursor, .conversation(frame.conversation))
            case "activity":
                let frame = try decoder.decode(ActivityFrame.self, from: data)
                return .durable(cursor: frame.cursor, .activity(event: frame.event, activity: frame.activity))
            case "notification":
                let frame = try decoder.decode(NotificationFrame.self, from: data)
                return .durable(cursor: frame.cursor, .notification(frame.notification))
            case "inbox":
                // It shares its notification's cursor, which that frame moved past already.
                return .ephemeral(.inboxItem(try decoder.decode(InboxFrame.self, from: data).item))
            case "inbox.status":
                let frame = try decoder.decode(InboxStatusFrame.self, from: data)
                return .durable(cursor: frame.cursor, .inboxStatus(InboxStatusChange(ids: frame.ids, status: frame.status, at: frame.at)))
            case "badge":
                return .ephemeral(.badge(try decoder.decode(BadgeFrame.self, from: data).count))
            case "presence":
                return .ephemeral(.presence(try decoder.decode(PresenceFrame.self, from: data).people))
            case "typing":
                let frame = try decoder.decode(TypingFrame.self, from: data)
                return .ephemeral(.typing(conversation: frame.conversation, person: frame.person))
            case "resync":
                return .resync(reason: (try? decoder.decode(ResyncFrame.self, from: data).reason) ?? "")
            case "error":
                let frame = try decoder.decode(ErrorFrame.self, from: data)
                return .ephemeral(.refused(code: frame.code, detail: frame.detail))
            default:
                // pong, and types a newer server may add: nothing for the app.
                return .ephemeral(nil)
            }
        } catch {
            return nil
        }
    }

    private struct Head: Decodable { var type: String }
    private struct HelloFrame: Decodable {
        var person: String
        var cursor: String
        var heartbeat: Int
    }
    private struct MessageFrame: Decodable {
        var cursor: String
        var conversation: UUID
        var message: Message
    }
    private struct ReceiptFrame: Decodable {
        var cursor: String
        var conversation: UUID
        var person: String
        var received: Int64?
        var read: Int64?
    }
    private struct ConversationFrame: Decodable {
        var cursor: String
        var conversation: Conversation
    }
    private struct ActivityFrame: Decodable {
        var cursor: String
        var event: String
        var activity: Activity
    }
    private struct NotificationFrame: Decodable {
        var cursor: String
        var notification: InAppNotification
    }
    private struct InboxFrame: Decodable { var item: InboxItem }
    private struct InboxStatusFrame: Decodable {
        var cursor: String
        var ids: [UUID]
        var status: String
        var at: Date
    }
    private struct BadgeFrame: Decodable { var count: Int }
    private struct PresenceFrame: Decodable { var people: [Presence] }
    private struct TypingFrame: Decodable {
        var conversation: UUID
        var person: String
    }
    private struct ResyncFrame: Decodable { var reason: String }
    private struct ErrorFrame: Decodable {
        var code: String
        var detail: String
    }
}

/// A frame the app sends (docs/live-protocol.md, "App → server").
public enum ClientFrame: Sendable, Equatable {
    case viewing(UUID?)
    case foreground(Bool)
    case subscribe([String])
    case received(conversation: UUID, sequence: Int64)
    case read(conversation: UUID, sequence: Int64)
    case typing(conversation: UUID)
    case ping

    /// As sent: one JSON object.
    public var text: String {
        func string(_ value: String) -> String {
            let data = (try? JSONCoding.encoder.encode(value)) ?? Data("\"\"".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        switch self {
        case .viewing(let id): return #"{"type":"viewing","conversation":\#(id.map { string($0.lowercased) } ?? "null")}"#
        case .foreground(let value): return #"{"type":"foreground","value":\#(value)}"#
        case .subscribe(let people): return #"{"type":"presence.subscribe","people":[\#(people.map(string).joined(separator: ","))]}"#
        case .received(let id, let sequence): return #"{"type":"received","conversation":"\#(id.lowercased)","sequence":\#(sequence)}"#
        case .read(let id, let sequence): return #"{"type":"read","conversation":"\#(id.lowercased)","sequence":\#(sequence)}"#
        case .typing(let id): return #"{"type":"typing","conversation":"\#(id.lowercased)"}"#
        case .ping: return #"{"type":"ping"}"#
        }
    }
}
