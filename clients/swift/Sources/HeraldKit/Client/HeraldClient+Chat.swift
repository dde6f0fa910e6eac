import Foundation

extension HeraldClient {
    /// The caller's conversations.
    public func conversations() async throws -> [Conversation] {
        try await call("GET", "/v1/conversations", as: Items<Conversation>.self).0.items
    }

    /// One conversation, with its participants (their receipts and presence).
    public func conversation(_ id: UUID) async throws -> Conversation { try await call("GET", "/v1/conversations/\(id.lowercased)").0 }

    /// Starts one: with one other person, a one-to-one (the existing one, if there is one), which
    /// has no name; with two or more, a group, which may have a `name`. A name for a
    /// one-to-one is refused (`.invalid`).
    public func createConversation(with people: [String], name: String? = nil, team: String? = nil) async throws -> Conversation {
        struct Body: Encodable {
            var with: [String]
            var name: String?
            var team: String?
        }
        return try await call("POST", "/v1/conversations", json: Body(with: people, name: name, team: team)).0
    }

    /// Its latest `limit` messages, oldest first; `before`: the page before that sequence (the
    /// first message's, to scroll back); `receipts`: with `receivedBy`, `readBy` and `status`.
    public func messages(in conversation: UUID, limit: Int = 50, before: Int64? = nil, receipts: Bool = false) async throws -> [Message] {
        let target =
            "/v1/conversations/\(conversation.lowercased)/messages"
            + query([("limit", "\(limit)"), ("before", before.map { "\($0)" }), ("receipts", receipts ? "true" : nil)])
        return try await call("GET", target, as: Items<Message>.self).0.items
    }

    /// Sends a message now. The same `clientId` again stores nothing new and notifies nobody
    /// (`created` false). An app that must survive being offline uses `Outbox` instead.
    public func send(text: String, to conversation: UUID, clientId: String? = nil, sentAt: Date? = nil) async throws -> (
        message: Message, created: Bool
    ) {
        struct Body: Encodable {
            var text: String
            var clientId: String?
            var sentAt: Date?
        }
        let (message, response) = try await call(
            "POST", "/v1/conversations/\(conversation.lowercased)/messages", json: Body(text: text, clientId: clientId, sentAt: sentAt),
            as: Message.self)
        return (message, response.status == 201)
    }

    /// The person read it up to now (the badge goes down).
    public func markRead(_ conversation: UUID) async throws { try await perform("POST", "/v1/conversations/\(conversation.lowercased)/read") }

    /// The app received it up to now (a live socket says so by itself).
    public func markReceived(_ conversation: UUID) async throws {
        try await perform("POST", "/v1/conversations/\(conversation.lowercased)/received")
    }

    /// It is on screen for `seconds` (1–3600): no push for it meanwhile. A live session's
    /// `view(_:)` does the same for as long as the socket lives.
    public func viewing(_ conversation: UUID, for seconds: Int) async throws {
        try await perform("PUT", "/v1/conversations/\(conversation.lowercased)/viewing", json: ["seconds": seconds])
    }

    public func rename(_ conversation: UUID, to name: String) async throws -> Conversation {
        try await call("PATCH", "/v1/conversations/\(conversation.lowercased)", json: ["name": name]).0
    }

    public func mute(_ conversation: UUID, _ muted: Bool = true) async throws {
        try await perform(muted ? "PUT" : "DELETE", "/v1/conversations/\(conversation.lowercased)/mute")
    }

    public func leave(_ conversation: UUID) async throws { try await perform("POST", "/v1/conversations/\(conversation.lowercased)/leave") }

    /// Someone's presence (404, `.notFound`, for someone who shares no team or conversation).
    public func presence(of person: String) async throws -> Presence {
        struct Answer: Decodable {
            var online: Bool
            var lastSeen: Date?
        }
        let answer: Answer = try await call("GET", "/v1/people/\(escaped(person))/presence").0
        return Presence(person: person, online: answer.online, lastSeen: answer.lastSeen)
    }

    /// Up to 100 people's presence at once.
    public func presence(of people: [String]) async throws -> PresenceList {
        try await call("GET", "/v1/presence" + query([("people", people.joined(separator: ","))])).0
    }

    /// A single-use ticket for a WebSocket that cannot carry `Authorization` (valid 30 s).
    public func liveTicket() async throws -> String {
        struct Ticket: Decodable { var ticket: String }
        return try await call("POST", "/v1/live/tickets", as: Ticket.self).0.ticket
    }
}
