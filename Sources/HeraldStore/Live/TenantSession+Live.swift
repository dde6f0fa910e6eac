import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// Tells every server that `person` types in `conversation`, if they take part in it.
    /// - Throws: `StoreError.notFound` when they do not.
    public func announceTyping(_ person: Person, in conversation: UUID) async throws {
        _ = try await participantConversation(conversation, actor: person, withUnread: false)
        let typing = LiveTyping(tenant: tenantID, conversation: conversation, person: person.id, email: person.email)
        try await connection.query("SELECT pg_notify(\(LiveTyping.channel), \(PostgresJSON(typing).postgresText ?? "{}"))")
    }

    /// Of `readers`, those who take part in `conversation` now.
    public func participants(of conversation: UUID, among readers: [UUID]) async throws -> [UUID] {
        guard !readers.isEmpty else { return [] }
        return try await connection.query(
            """
            SELECT cp.person_id FROM conversation_participants cp
            WHERE cp.tenant_id = \(tenantID) AND cp.conversation_id = \(conversation) AND cp.person_id = ANY(\(readers)) AND \(takingPart: "cp")
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
        _ = try await participantConversation(conversation, actor: person, withUnread: false)
        try await connection.query(
            """
            UPDATE conversation_participants
            SET viewing_until = CASE WHEN \(seconds)::int IS NULL THEN NULL ELSE now() + make_interval(secs => \(seconds)::int) END
            WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation) AND person_id = \(person.id)
            """)
    }

    /// Marks whether `person`'s device `token` has its app in the foreground with a live
    /// socket on `server`: while it does, and while the device is still theirs, chat pushes to
    /// it are skipped (reason `live`).
    public func setLiveForeground(_ foreground: Bool, device token: String, of person: Person, server: UUID) async throws {
        if foreground {
            try await connection.query(
                """
                INSERT INTO live_devices (tenant_id, device_id, server_id, person_id)
                SELECT \(tenantID), d.id, \(server), d.person_id FROM devices d
                WHERE d.tenant_id = \(tenantID) AND d.person_id = \(person.id) AND d.token = \(token) AND d.removed_at IS NULL
                  AND d.kind <> 'email'
                ON CONFLICT DO NOTHING
                """)
        } else {
            try await connection.query(
                """
                DELETE FROM live_devices v USING devices d
                WHERE v.tenant_id = \(tenantID) AND v.server_id = \(server) AND v.person_id = \(person.id) AND d.tenant_id = v.tenant_id
                  AND d.id = v.device_id AND d.token = \(token)
                """)
        }
    }

    /// `person`'s device `token`, if a live socket may speak for it (`device=`): registered,
    /// not logged out nor deactivated, and a device alerts go to (not a Live Activity's token).
    public func liveDevice(token: String, of person: Person) async throws -> Device? {
        try await connection.query(
            """
            SELECT \(unsafeRaw: Self.deviceColumns) \(unsafeRaw: Self.deviceFrom)
            WHERE d.tenant_id = \(tenantID) AND d.person_id = \(person.id) AND d.token = \(token) AND d.kind = 'alert'
              AND d.removed_at IS NULL AND d.deactivated_at IS NULL
            """
        ).first.map(device(_:))
    }
}
