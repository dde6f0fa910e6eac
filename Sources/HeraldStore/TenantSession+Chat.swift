import Foundation
import HeraldCore
import HeraldPostgres

/// A participant as a conversation shows them.
public struct ParticipantRecord: Sendable, Codable, Equatable {
    public let person: PersonReference
    public let muted: Bool
    public let lastReadSequence: Int64
    /// The highest sequence their apps received (over the live channel, or said so).
    public let lastReceivedSequence: Int64
    public let viewing: Bool
    /// Whether they are online now, as the viewer may see it (`showPresence`).
    public let online: Bool
    public let lastSeen: Date?
}

/// A conversation, from one participant's point of view.
public struct ConversationRecord: Sendable, Codable, Equatable {
    public let id: UUID
    public let team: ActivityRecord.TeamReference
    public let kind: ConversationKind
    public let name: String?
    public let photoURL: String?
    public let participants: [ParticipantRecord]
    /// Messages the viewer has not read (not counting their own or system messages).
    public let unread: Int
    public let createdAt: Date

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id
        case team
        case kind
        case name
        case photoURL = "photoUrl"
        case participants
        case unread
        case createdAt
    }
}

/// A message, with who got it and who read it when asked for receipts.
public struct MessageRecord: Sendable, Codable, Equatable {
    public let id: UUID
    public let sequence: Int64
    public let sender: PersonReference
    public let text: String
    public let isSystem: Bool
    public let clientID: String?
    public let sentAt: Date
    public let storedAt: Date
    /// Emails of the recipients a provider accepted a push for (with `--receipts`).
    public var deliveredTo: [String]?
    /// Emails of the participants who have read it (with `--receipts`).
    public var readBy: [String]?
    /// Emails of the participants whose apps received it (with `--receipts`).
    public var receivedBy: [String]?
    /// `sent` (stored), `delivered` (every other participant's app received it), `read`
    /// (every other participant read it), with `--receipts`.
    public var status: MessageStatus?

    /// JSON names: identifiers end in `Id` and addresses in `Url`, as everywhere in the API.
    enum CodingKeys: String, CodingKey {
        case id
        case sequence
        case sender
        case text
        case isSystem
        case clientID = "clientId"
        case sentAt
        case storedAt
        case deliveredTo
        case readBy
        case receivedBy
        case status
    }
}

/// Where a message stands for its sender.
public enum MessageStatus: String, Sendable, Codable {
    case sent, delivered, read
}

extension TenantSession {
    // MARK: Creating

    /// Creates a conversation of `actor` with `others`: direct for two people (the existing
    /// one is returned if there is one), a group for three or more. A group starts with a
    /// system message. Everyone must belong to the team.
    /// - Throws: `InputError`; `StoreError` (`.notFound`, `.invalid`, `.forbidden`).
    public func createConversation(
        actor email: String, with others: [String], name: String?, photoURL: String?, team teamSlug: String?
    ) async throws -> ConversationRecord {
        let name = try name.map { try Input.name($0, field: "conversation name") }
        let photoURL = try photoURL.map { try Input.url($0, field: "photo") }
        let actor = try await person(email: email)
        var people = [actor]
        for other in others {
            let person = try await person(email: other)
            if !people.contains(where: { $0.id == person.id }) { people.append(person) }
        }
        guard people.count >= 2 else { throw StoreError(.invalid, "a conversation needs at least one other person") }
        let kind: ConversationKind = people.count == 2 ? .direct : .group
        if kind == .direct, name != nil || photoURL != nil {
            throw StoreError(.invalid, "a group needs three or more people; a conversation of two has no name or photo")
        }
        let team = try await conversationTeam(teamSlug, for: people)

        if kind == .direct,
            let existing = try await connection.query(
                """
                SELECT c.id FROM conversations c
                WHERE c.tenant_id = \(tenantID) AND c.team_id = \(team.id) AND c.kind = 'direct'
                  AND (SELECT array_agg(p.person_id ORDER BY p.person_id) FROM conversation_participants p
                       WHERE p.tenant_id = c.tenant_id AND p.conversation_id = c.id)
                      = (SELECT array_agg(x ORDER BY x) FROM unnest(\(people.map(\.id))::uuid[]) x)
                """
            ).first
        {
            return try await conversation(id: try existing.decode(UUID.self, at: 0), viewer: actor)
        }

        let id = UUID.v7()
        try await connection.query(
            """
            INSERT INTO conversations (tenant_id, id, team_id, kind, name, photo_url, created_by)
            VALUES (\(tenantID), \(id), \(team.id), \(kind.rawValue), \(name), \(photoURL), \(actor.id))
            """)
        try await connection.query(
            """
            INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
            SELECT \(tenantID), \(id), x FROM unnest(\(people.map(\.id))::uuid[]) x
            """)
        if kind == .group {
            let text = name.map { "\(actor.name) created the group \($0)" } ?? "\(actor.name) created the group"
            try await addSystemMessage(text, conversation: id, actor: actor.id)
        } else {
            try await appendLive(.conversation, .conversation(id), payload: ConversationChanged(conversation: id))
        }
        return try await conversation(id: id, viewer: actor)
    }

    /// The team a new conversation belongs to: the one named, or the only team everyone is in.
    private func conversationTeam(_ slug: String?, for people: [Person]) async throws -> Team {
        if let slug {
            let team = try await team(slug: slug)
            for person in people where try await role(of: person.id, in: team.id) == nil {
                throw StoreError(.invalid, "\(person.email) is not in team \(team.slug); only people of the team may be in its conversations")
            }
            return team
        }
        let rows = try await connection.query(
            """
            SELECT t.id, t.slug, t.name, t.created_at FROM teams t
            WHERE t.tenant_id = \(tenantID)
              AND (SELECT count(*) FROM team_members m
                   WHERE m.tenant_id = t.tenant_id AND m.team_id = t.id AND m.person_id = ANY(\(people.map(\.id)))) = \(people.count)
            ORDER BY t.slug
            """)
        guard rows.count == 1 else {
            throw StoreError(
                .invalid,
                rows.isEmpty
                    ? "these people share no team; only people of one team may talk in its conversations"
                    : "these people share several teams; say which team the conversation belongs to")
        }
        return try Self.team(rows[0])
    }

    // MARK: Messages

    /// Sends a message. With a client id, sending the same one again returns the stored
    /// message and notifies nobody again (`created` is false).
    /// - Throws: `InputError`; `StoreError` (`.notFound`, `.forbidden`).
    public func sendMessage(
        actor email: String, conversation conversationID: UUID, text body: String, clientID: String?, sentAt: Date?
    ) async throws -> (message: MessageRecord, created: Bool) {
        try await sendMessage(as: try await person(email: email), conversation: conversationID, text: body, clientID: clientID, sentAt: sentAt)
    }

    /// Sends a message as `actor` (the API's caller, already known); as `sendMessage(actor:…)`.
    public func sendMessage(
        as actor: Person, conversation conversationID: UUID, text body: String, clientID: String?, sentAt: Date?
    ) async throws -> (message: MessageRecord, created: Bool) {
        let body = try Input.text(body, field: "message")
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw InputError("the message is empty") }
        let clientID = try clientID.map { try Input.name($0, field: "client id") }
        if let sentAt, sentAt > Date().addingTimeInterval(300) {
            throw InputError("the time the message was sent is in the future")
        }
        let conversation = try await participantConversation(conversationID, actor: actor, withUnread: false)

        // The message stored, read back, and its conversation's participants: one round trip.
        // Each participant's role looked up by its whole key (a subquery a row: the team's
        // primary key), whatever the statistics said when the connection's plan was made. Joined,
        // a plan made while the team and the group were a few people looked the team up by
        // (tenant, team) alone and matched the person as a filter: the whole team read for
        // every participant, 4 million rows and a second for a message to a group of 2,000
        // (docs/operating/database.md, "Statistics of young tables").
        let id = UUID.v7()
        let results = try await connection.query([
            """
            INSERT INTO messages (tenant_id, id, conversation_id, sender_id, text, client_id, sent_at)
            VALUES (\(tenantID), \(id), \(conversationID), \(actor.id), \(body), \(clientID), coalesce(\(sentAt), now()))
            ON CONFLICT ON CONSTRAINT messages_client_once DO NOTHING
            RETURNING id
            """,
            messagesQuery(conversation: conversationID, .id(id), limit: 1),
            """
            SELECT p.person_id,
                   (SELECT m.role FROM team_members m
                    WHERE m.tenant_id = p.tenant_id AND m.team_id = \(conversation.team.id) AND m.person_id = p.person_id)
            FROM conversation_participants p
            WHERE p.tenant_id = \(tenantID) AND p.conversation_id = \(conversationID) AND p.left_at IS NULL
            ORDER BY p.joined_at, p.person_id
            """
        ])
        guard !results[0].isEmpty else {
            let existing = try await messages(conversation: conversationID, .clientID(clientID ?? "", sender: actor.id), limit: 1)
            guard let message = existing.first else { throw StoreError(.conflict, "client id \(clientID ?? "") was used in another conversation") }
            return (message, false)
        }
        guard let message = try Self.messageRecords(results[1]).first else {
            throw StoreError(.notFound, "the message just stored cannot be read back")
        }
        let participants = try results[2].map { row -> (id: UUID, role: TeamRole?) in
            let (id, role) = try row.decode((UUID, String?).self)
            return (id, role.flatMap(TeamRole.init(rawValue:)))
        }
        let recipients = Routing.chat(participants: participants, sender: actor.id, isSystem: false)
        let payload = ChatEventPayload(
            conversationID: conversationID, messageID: id, teamID: conversation.team.id, isGroup: conversation.kind == .group,
            groupName: conversation.name, photoURL: conversation.photoURL, sender: actor.reference, text: body,
            recipients: recipients, sentAt: message.sentAt)
        try await appendToOutbox(
            .chatMessage, about: .message(id), actor: actor.id, recipients: recipients.map(\.id), payload: payload, at: message.storedAt)
        try await appendLive(.message, .conversation(conversationID), payload: message)
        return (message, true)
    }

    /// A system message, and the live frames of it and of the conversation's change.
    func addSystemMessage(_ text: String, conversation: UUID, actor: UUID) async throws {
        let id = UUID.v7()
        try await connection.query(
            """
            INSERT INTO messages (tenant_id, id, conversation_id, sender_id, text, is_system, sent_at)
            VALUES (\(tenantID), \(id), \(conversation), \(actor), \(text), true, now())
            """)
        if let message = try await messages(conversation: conversation, .id(id), limit: 1).first {
            try await appendLive(.message, .conversation(conversation), payload: message)
        }
        try await appendLive(.conversation, .conversation(conversation), payload: ConversationChanged(conversation: conversation))
    }

    // MARK: Membership and state

    /// A change to a group or to the actor's own place in a conversation.
    public enum ConversationChange: Sendable {
        case add(email: String)
        case remove(email: String)
        case leave
        case rename(String)
        case read
        /// Read up to this sequence (the live channel's `read` frame).
        case readUpTo(Int64)
        /// Received up to this sequence, or everything stored (nil).
        case received(upTo: Int64?)
        case mute(Bool)
        case viewing(for: Duration)
    }

    /// Applies `change`; membership changes and renames leave a system message, which
    /// notifies nobody.
    /// - Throws: `InputError`; `StoreError` (`.notFound`, `.forbidden`, `.invalid`).
    @discardableResult
    public func changeConversation(actor email: String, conversation id: UUID, _ change: ConversationChange) async throws -> ConversationRecord {
        let actor = try await person(email: email)
        var leaving = false
        if case .leave = change { leaving = true }
        // Leaving returns the conversation as it was; everything else reads it afresh below.
        let conversation = try await participantConversation(id, actor: actor, withParticipants: leaving, withUnread: leaving)
        func requireGroup(_ what: String) throws {
            guard conversation.kind == .group else { throw StoreError(.invalid, "a direct conversation cannot \(what)") }
        }
        switch change {
        case .add(let email):
            try requireGroup("have people added")
            let person = try await person(email: email)
            guard try await role(of: person.id, in: conversation.team.id) != nil else {
                throw StoreError(.invalid, "\(person.email) is not in team \(conversation.team.slug); only people of the team may be added")
            }
            let rows = try await connection.query(
                """
                INSERT INTO conversation_participants (tenant_id, conversation_id, person_id) VALUES (\(tenantID), \(id), \(person.id))
                ON CONFLICT (tenant_id, conversation_id, person_id) DO UPDATE
                    SET left_at = NULL, left_snapshot = NULL, joined_at = now(),
                        last_read_seq = (SELECT coalesce(max(seq), 0) FROM messages WHERE tenant_id = \(tenantID) AND conversation_id = \(id))
                    WHERE conversation_participants.left_at IS NOT NULL
                RETURNING person_id
                """)
            guard !rows.isEmpty else { throw StoreError(.alreadyExists, "\(person.email) is already in this conversation") }
            try await addSystemMessage("\(actor.name) added \(person.name)", conversation: id, actor: actor.id)
        case .remove(let email):
            try requireGroup("have people removed")
            let person = try await person(email: email)
            guard person.id != actor.id else { throw StoreError(.invalid, "to leave a conversation, use chat leave") }
            try await requireModerator(actor, of: conversation, to: "remove people from it")
            try await setLeft(person, conversation: id)
            try await addSystemMessage("\(actor.name) removed \(person.name)", conversation: id, actor: actor.id)
        case .leave:
            try requireGroup("be left")
            try await setLeft(actor, conversation: id)
            try await addSystemMessage("\(actor.name) left", conversation: id, actor: actor.id)
        case .rename(let name):
            try requireGroup("be renamed")
            let name = try Input.name(name, field: "conversation name")
            try await requireModerator(actor, of: conversation, to: "rename it")
            try await connection.query("UPDATE conversations SET name = \(name) WHERE tenant_id = \(tenantID) AND id = \(id)")
            try await addSystemMessage("\(actor.name) renamed the group to \(name)", conversation: id, actor: actor.id)
        case .read:
            try await receipt(of: actor, in: id, read: nil, received: nil, readAll: true)
        case .readUpTo(let sequence):
            try await receipt(of: actor, in: id, read: sequence, received: nil, readAll: false)
        case .received(let sequence):
            try await receipt(of: actor, in: id, read: nil, received: sequence ?? Int64.max, readAll: false)
        case .mute(let muted):
            try await connection.query(
                """
                UPDATE conversation_participants SET muted = \(muted)
                WHERE tenant_id = \(tenantID) AND conversation_id = \(id) AND person_id = \(actor.id)
                """)
        case .viewing(let duration):
            guard duration > .zero, duration <= .seconds(3600) else { throw InputError("viewing lasts between 1 second and 1 hour") }
            let seconds = duration.timeInterval
            try await connection.query(
                """
                UPDATE conversation_participants SET viewing_until = now() + make_interval(secs => \(seconds))
                WHERE tenant_id = \(tenantID) AND conversation_id = \(id) AND person_id = \(actor.id)
                """)
        }
        if leaving { return conversation }
        return try await self.conversation(id: id, viewer: actor)
    }

    /// Removing others and renaming a group are for whoever created it, the managers of its
    /// team and the tenant's admins; any participant may add people of the team, or leave.
    private func requireModerator(_ actor: Person, of conversation: ConversationRecord, to what: String) async throws {
        let role = try await role(of: actor.id, in: conversation.team.id)
        let creator = try await connection.query(
            "SELECT created_by FROM conversations WHERE tenant_id = \(tenantID) AND id = \(conversation.id)"
        ).first?.decode(UUID?.self, at: 0)
        guard AccessPolicy(actor).mayModerate(creator: creator, role: role) else {
            throw StoreError(.forbidden, "only the group's creator, a manager of team \(conversation.team.slug) or an admin may \(what)")
        }
    }

    /// `person` leaves (or is removed): what they go on seeing of the conversation is kept as
    /// it is now, without them (`DepartureSnapshot`).
    func setLeft(_ person: Person, conversation: UUID) async throws {
        let now = try await self.conversation(id: conversation, viewer: person)
        let snapshot = DepartureSnapshot(leaving: person.id, from: now)
        let rows = try await connection.query(
            """
            UPDATE conversation_participants SET left_at = now(), viewing_until = NULL, left_snapshot = \(PostgresJSON(snapshot))
            WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation) AND person_id = \(person.id) AND left_at IS NULL
            RETURNING person_id
            """)
        guard !rows.isEmpty else { throw StoreError(.notFound, "\(person.email) is not in this conversation") }
    }
}
