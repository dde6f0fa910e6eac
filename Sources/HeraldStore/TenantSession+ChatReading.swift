import Foundation
import HeraldCore
import HeraldPostgres

/// Conversations and messages as a participant sees them.
extension TenantSession {
    /// The conversations `email` takes part in, most recently active first.
    public func conversations(viewer email: String) async throws -> [ConversationRecord] {
        let viewer = try await person(email: email)
        let ids = try await connection.query(
            """
            SELECT c.id FROM conversations c
            WHERE c.tenant_id = \(tenantID) AND \(takesPartIn: viewer.id)
            ORDER BY (SELECT max(seq) FROM messages m WHERE m.tenant_id = c.tenant_id AND m.conversation_id = c.id) DESC NULLS LAST, c.id
            """
        ).map { try $0.decode(UUID.self, at: 0) }
        var result: [ConversationRecord] = []
        for id in ids { result.append(try await conversation(id: id, viewer: viewer)) }
        return result
    }

    /// One conversation and its latest messages (oldest first), for a participant.
    public func conversationDetail(
        viewer email: String, conversation id: UUID, receipts: Bool, limit: Int = 100, before: Int64? = nil
    ) async throws -> (ConversationRecord, [MessageRecord]) {
        let viewer = try await person(email: email)
        let conversation = try await participantConversation(id, actor: viewer, allowLeft: true, withParticipants: true)
        // What `AccessPolicy.mayRead` lets them see (someone who left, or was removed: what
        // was stored up to then, and nothing after).
        var messages = try await messages(conversation: id, before.map { .before($0) } ?? .all, readableBy: viewer.id, limit: limit)
        if receipts {
            let delivered = try await connection.query(
                """
                SELECT o.message_id, p.email FROM outbox o
                JOIN notification_outcomes n ON n.tenant_id = o.tenant_id AND n.event_id = o.id
                JOIN people p ON p.tenant_id = n.tenant_id AND p.id = n.recipient_id
                WHERE o.tenant_id = \(tenantID) AND o.message_id = ANY(\(messages.map(\.id))) AND n.devices_sent > 0
                ORDER BY p.email
                """)
            var byMessage: [UUID: [String]] = [:]
            for row in delivered {
                let (message, email) = try row.decode((UUID, String).self)
                byMessage[message, default: []].append(email)
            }
            for index in messages.indices {
                let message = messages[index]
                messages[index].deliveredTo = message.isSystem ? [] : byMessage[message.id] ?? []
                let others = conversation.participants.filter { $0.person.id != message.sender.id }
                let readers = others.filter { $0.lastReadSequence >= message.sequence }
                let receivers = others.filter { max($0.lastReceivedSequence, $0.lastReadSequence) >= message.sequence }
                messages[index].readBy = readers.map(\.person.email).sorted()
                messages[index].receivedBy = receivers.map(\.person.email).sorted()
                messages[index].status =
                    others.isEmpty || message.isSystem
                    ? .sent : readers.count == others.count ? .read : receivers.count == others.count ? .delivered : .sent
            }
        }
        return (conversation, messages)
    }

    /// Which messages `messages(conversation:_:limit:)` returns.
    enum MessageFilter {
        case all
        /// The latest of those whose sequence is below this one (the page before it).
        case before(Int64)
        case id(UUID)
        case clientID(String, sender: UUID)
    }

    /// - Parameter reader: only the messages this person may read (`AccessPolicy.mayRead`).
    func messages(conversation: UUID, _ filter: MessageFilter, readableBy reader: UUID? = nil, limit: Int) async throws -> [MessageRecord] {
        try Self.messageRecords(try await connection.query(messagesQuery(conversation: conversation, filter, readableBy: reader, limit: limit)))
    }

    /// The statement `messages(conversation:_:readableBy:limit:)` runs; `messageRecords` reads
    /// its rows.
    func messagesQuery(conversation: UUID, _ filter: MessageFilter, readableBy reader: UUID? = nil, limit: Int) -> PostgresQuery {
        var id: UUID?
        var clientID: String?
        var sender: UUID?
        var before: Int64?
        switch filter {
        case .all: break
        case .before(let sequence): before = sequence
        case .id(let value): id = value
        case .clientID(let value, let by): (clientID, sender) = (value, by)
        }
        // Only the filter at hand is in the text (`and:`), so each kind is a statement planned
        // once a connection, not again at each run (a message sent reads itself back by id).
        return """
            SELECT * FROM (
                SELECT m.id, m.seq, p.id, p.email, p.display_name, m.text, m.is_system, m.client_id, m.sent_at, m.stored_at
                FROM messages m JOIN people p ON p.tenant_id = m.tenant_id AND p.id = m.sender_id
                WHERE m.tenant_id = \(tenantID) AND m.conversation_id = \(conversation)\(and: "m.id =", id)\(and: "m.seq <", before)
                  \(and: "m.client_id =", clientID)\(and: "m.sender_id =", sender)
                  \(readableBy: reader)
                ORDER BY m.seq DESC \(limit: limit)
            ) x ORDER BY seq
            """
    }

    /// The messages of rows of `messagesQuery`.
    static func messageRecords(_ rows: PostgresRows) throws -> [MessageRecord] {
        try rows.map { row in
            let (id, seq, senderID, email, name, text, isSystem, clientID, sentAt, storedAt) =
                try row.decode((UUID, Int64, UUID, String, String, String, Bool, String?, Date, Date).self)
            return MessageRecord(
                id: id, sequence: seq, sender: PersonReference(id: senderID, email: email, name: name), text: text, isSystem: isSystem,
                clientID: clientID, sentAt: sentAt, storedAt: storedAt)
        }
    }

    /// The conversation, if `actor` takes part in it.
    /// - Parameter withUnread: count what `actor` has not read (a check that only needs to know
    ///   they take part, or the conversation's team and kind, need not: the count reads every
    ///   unread message, and a message sent, a typing frame or a screen's renewal asks this).
    func participantConversation(
        _ id: UUID, actor: Person, allowLeft: Bool = false, withParticipants: Bool = false, withUnread: Bool = true
    ) async throws -> ConversationRecord {
        // The conversation and the actor's part in it: one round trip.
        let results = try await connection.query([
            conversationQuery(id: id, viewer: actor, withUnread: withUnread), participationQuery(of: actor, in: id)
        ])
        let participation = try Self.participation(results[1])
        let policy = AccessPolicy(actor)
        guard participation != nil, allowLeft || policy.mayTakePart(participation) else {
            throw StoreError(.notFound, "no conversation \(id.lowercasedString) that \(actor.email) takes part in")
        }
        return try await conversation(results[0], id: id, viewer: actor, withParticipants: withParticipants)
    }

    /// The conversation as `viewer` sees it: as it is now, or, for someone who left it (or was
    /// removed), as it was when they left (`DepartureSnapshot`): nothing that happened later.
    /// - Parameter withParticipants: list them (a large group has thousands; sending a
    ///   message does not need them).
    /// - Parameter withUnread: count the viewer's unread messages (else `unread` is 0).
    func conversation(id: UUID, viewer: Person, withParticipants: Bool = true, withUnread: Bool = true) async throws -> ConversationRecord {
        let rows = try await connection.query(conversationQuery(id: id, viewer: viewer, withUnread: withUnread))
        return try await conversation(rows, id: id, viewer: viewer, withParticipants: withParticipants)
    }

    /// The row of conversation `id` that `conversation(_:id:viewer:withParticipants:)` reads.
    private func conversationQuery(id: UUID, viewer: Person, withUnread: Bool) -> PostgresQuery {
        """
        SELECT c.id, t.id, t.slug, t.name, c.kind, c.name, c.photo_url, c.created_at,
               \(unreadOf: withUnread ? viewer.id : nil),
               (SELECT v.left_snapshot::text FROM conversation_participants v
                WHERE v.tenant_id = c.tenant_id AND v.conversation_id = c.id AND v.person_id = \(viewer.id) AND v.left_at IS NOT NULL)
        FROM conversations c JOIN teams t ON t.tenant_id = c.tenant_id AND t.id = c.team_id
        WHERE c.tenant_id = \(tenantID) AND c.id = \(id)
        """
    }

    /// The conversation of `conversationQuery`'s rows, with its participants when asked.
    private func conversation(_ rows: PostgresRows, id: UUID, viewer: Person, withParticipants: Bool) async throws -> ConversationRecord {
        guard let row = rows.first else {
            throw StoreError(.notFound, "no conversation \(id.lowercasedString) that \(viewer.email) takes part in")
        }
        let (conversationID, teamID, slug, teamName, kind, name, photo, createdAt, unread, departed) =
            try row.decode((UUID, UUID, String, String, String, String?, String?, Date, Int, String?).self)
        let team = ActivityRecord.TeamReference(id: teamID, slug: slug, name: teamName)
        if let departed {
            let snapshot = try PostgresJSON<DepartureSnapshot>(postgresText: departed, type: .jsonb).value
            return ConversationRecord(
                id: conversationID, team: team, kind: try Self.decodeEnum(kind), name: snapshot.name, photoURL: snapshot.photoURL,
                participants: withParticipants ? snapshot.participants.map(\.record) : [], unread: unread, createdAt: createdAt)
        }
        let participants: [ParticipantRecord] =
            !withParticipants
            ? []
            : try await connection.query(
                """
                SELECT p.id, p.email, p.display_name, cp.muted, cp.last_read_seq, cp.last_received_seq,
                       coalesce(cp.viewing_until > now(), false),
                       (p.show_presence OR p.id = \(viewer.id)) AND EXISTS (
                           SELECT FROM live_presence lp JOIN live_servers s ON s.id = lp.server_id
                           WHERE lp.tenant_id = p.tenant_id AND lp.person_id = p.id
                             AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval))),
                       CASE WHEN p.show_presence OR p.id = \(viewer.id) THEN p.last_seen_at END
                FROM conversation_participants cp JOIN people p ON p.tenant_id = cp.tenant_id AND p.id = cp.person_id
                WHERE cp.tenant_id = \(tenantID) AND cp.conversation_id = \(id) AND cp.left_at IS NULL
                ORDER BY cp.joined_at, p.email
                """
            ).map { row in
                let (personID, email, name, muted, lastRead, lastReceived, viewing, online, lastSeen) =
                    try row.decode((UUID, String, String, Bool, Int64, Int64, Bool, Bool, Date?).self)
                return ParticipantRecord(
                    person: PersonReference(id: personID, email: email, name: name), muted: muted, lastReadSequence: lastRead,
                    lastReceivedSequence: lastReceived, viewing: viewing, online: online, lastSeen: lastSeen)
            }
        return ConversationRecord(
            id: conversationID, team: team, kind: try Self.decodeEnum(kind), name: name, photoURL: photo, participants: participants,
            unread: unread, createdAt: createdAt)
    }
}

extension PostgresQuery.StringInterpolation {
    /// The count of messages `viewer` has not read in conversation `c`, or 0 when there is no
    /// viewer to count for: two statements, each planned once a connection, where
    /// `CASE WHEN $n THEN … END` made PostgreSQL plan it again at every run to drop the branch.
    fileprivate mutating func appendInterpolation(unreadOf viewer: UUID?) {
        guard let viewer else { return appendLiteral("0") }
        appendLiteral(
            "(SELECT count(*)::int FROM messages m JOIN conversation_participants v"
                + " ON v.tenant_id = m.tenant_id AND v.conversation_id = m.conversation_id AND v.person_id = ")
        appendInterpolation(viewer)
        appendLiteral(
            " WHERE m.tenant_id = c.tenant_id AND m.conversation_id = c.id AND m.seq > v.last_read_seq"
                + " AND NOT m.is_system AND m.sender_id <> ")
        appendInterpolation(viewer)
        appendLiteral(" AND ")
        appendInterpolation(messageReadableBy: viewer)
        appendLiteral(")")
    }
}
