import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// Tells every server that `person` types in `conversation`, if they take part in it.
    /// - Throws: `StoreError.notFound` when they do not.
    public func announceTyping(_ person: Person, in conversation: UUID) async throws {
        _ = try await participantConversation(conversation, actor: person)
        let typing = LiveTyping(tenant: tenantID, conversation: conversation, person: person.id, email: person.email)
        try await connection.query("SELECT pg_notify(\(LiveTyping.channel), \(PostgresJSON(typing).postgresText ?? "{}"))")
    }

    /// Of `readers`, those who take part in `conversation` now.
    public func participants(of conversation: UUID, among readers: [UUID]) async throws -> [UUID] {
        guard !readers.isEmpty else { return [] }
        return try await connection.query(
            """
            SELECT person_id FROM conversation_participants
            WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation) AND person_id = ANY(\(readers)) AND left_at IS NULL
            """
        ).map { try $0.decode(UUID.self, at: 0) }
    }

    /// A conversation's object as `viewer` sees it now, for their `conversation` frame.
    public func liveConversation(_ id: UUID, viewer: Person) async throws -> ConversationRecord {
        try await conversation(id: id, viewer: viewer)
    }

    /// Marks that `person` views `conversation` for `seconds` more (a live socket's screen,
    /// refreshed while it lives), or no longer (nil).
    public func setLiveViewing(_ person: Person, conversation: UUID, seconds: Int?) async throws {
        _ = try await participantConversation(conversation, actor: person)
        try await connection.query(
            """
            UPDATE conversation_participants
            SET viewing_until = CASE WHEN \(seconds)::int IS NULL THEN NULL ELSE now() + make_interval(secs => \(seconds)::int) END
            WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation) AND person_id = \(person.id)
            """)
    }
}
