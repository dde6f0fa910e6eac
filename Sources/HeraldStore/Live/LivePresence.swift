import Foundation
import HeraldCore
import HeraldPostgres

/// A change of someone's presence, as the servers tell each other (NOTIFY on
/// `LivePresenceChange.channel`, a hint like every NOTIFY: the table is the truth).
public struct LivePresenceChange: Sendable, Codable, Equatable {
    public static let channel = "herald_presence"

    public let tenant: UUID
    public let person: UUID
    public let email: String
    public let online: Bool
    public let lastSeen: Date?
    /// False: the person hides their presence; others see them offline with no time.
    public let shown: Bool
}

/// Whether someone is online, as another person may see it.
public struct PresenceRecord: Sendable, Codable, Equatable {
    public let online: Bool
    public let lastSeen: Date?

    public init(online: Bool, lastSeen: Date?) {
        self.online = online
        self.lastSeen = lastSeen
    }
}

extension Store {
    /// A server with no stamp for this long has died; its people go offline.
    public static let liveServerLifetime: Duration = .seconds(25)

    /// Stamps this server as alive (and registers it the first time).
    public func stampLiveServer(_ server: UUID) async throws {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            try await connection.query(
                "INSERT INTO live_servers (id) VALUES (\(server)) ON CONFLICT (id) DO UPDATE SET seen_at = now()")
        }
    }

    /// A person's first socket on this server: they are online here. - Returns: the change
    /// others should see (nil when they were online elsewhere already).
    public func liveOnline(tenant: UUID, person: UUID, server: UUID) async throws -> LivePresenceChange? {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            let rows = try await connection.query(
                """
                WITH elsewhere AS (
                    SELECT count(*) AS n FROM live_presence p JOIN live_servers s ON s.id = p.server_id
                    WHERE p.tenant_id = \(tenant) AND p.person_id = \(person) AND p.server_id <> \(server)
                      AND s.seen_at > now() - make_interval(secs => \(Self.liveServerLifetime.timeInterval))
                ), added AS (
                    INSERT INTO live_presence (tenant_id, person_id, server_id) VALUES (\(tenant), \(person), \(server))
                    ON CONFLICT DO NOTHING RETURNING person_id
                )
                SELECT p.email, p.show_presence, (SELECT n FROM elsewhere) = 0 AND EXISTS (SELECT FROM added)
                FROM people p WHERE p.tenant_id = \(tenant) AND p.id = \(person)
                """)
            guard let row = rows.first else { return nil }
            let (email, shown, changed) = try row.decode((String, Bool, Bool).self)
            guard changed else { return nil }
            let change = LivePresenceChange(tenant: tenant, person: person, email: email, online: true, lastSeen: nil, shown: shown)
            try await Self.announce([change], on: connection)
            return change
        }
    }

    /// A person's last socket on this server closed: they were last seen now. - Returns: the
    /// change others should see (nil when they are still online elsewhere).
    public func liveOffline(tenant: UUID, person: UUID, server: UUID) async throws -> LivePresenceChange? {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            let rows = try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM live_presence WHERE tenant_id = \(tenant) AND person_id = \(person) AND server_id = \(server)
                    RETURNING person_id
                ), stamped AS (
                    UPDATE people SET last_seen_at = now() WHERE tenant_id = \(tenant) AND id = \(person)
                    RETURNING email, show_presence, last_seen_at
                )
                SELECT email, show_presence, last_seen_at,
                       NOT EXISTS (SELECT FROM live_presence p JOIN live_servers s ON s.id = p.server_id
                                   WHERE p.tenant_id = \(tenant) AND p.person_id = \(person) AND p.server_id <> \(server)
                                     AND s.seen_at > now() - make_interval(secs => \(Self.liveServerLifetime.timeInterval)))
                FROM stamped
                """)
            guard let row = rows.first else { return nil }
            let (email, shown, lastSeen, changed) = try row.decode((String, Bool, Date?, Bool).self)
            guard changed else { return nil }
            let change = LivePresenceChange(tenant: tenant, person: person, email: email, online: false, lastSeen: lastSeen, shown: shown)
            try await Self.announce([change], on: connection)
            return change
        }
    }

    /// Removes servers that stopped stamping, and with them the presence of their people:
    /// those online nowhere else go offline, last seen when their server was. - Returns: the changes.
    @discardableResult
    public func reapLiveServers() async throws -> [LivePresenceChange] {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            let rows = try await connection.query(
                """
                WITH dead AS (
                    DELETE FROM live_servers WHERE seen_at < now() - make_interval(secs => \(Self.liveServerLifetime.timeInterval))
                    RETURNING id, seen_at
                ), devices AS (
                    DELETE FROM live_devices v USING dead WHERE v.server_id = dead.id
                ), gone AS (
                    DELETE FROM live_presence p USING dead WHERE p.server_id = dead.id
                    RETURNING p.tenant_id, p.person_id, dead.seen_at
                ), offline AS (
                    SELECT g.tenant_id, g.person_id, max(g.seen_at) AS seen FROM gone g
                    WHERE NOT EXISTS (SELECT FROM live_presence q WHERE q.tenant_id = g.tenant_id AND q.person_id = g.person_id
                                      AND q.server_id NOT IN (SELECT id FROM dead))
                    GROUP BY g.tenant_id, g.person_id
                )
                UPDATE people SET last_seen_at = o.seen FROM offline o
                WHERE people.tenant_id = o.tenant_id AND people.id = o.person_id
                RETURNING people.tenant_id, people.id, people.email, people.show_presence, o.seen
                """)
            let changes = try rows.map { row in
                let (tenant, person, email, shown, seen) = try row.decode((UUID, UUID, String, Bool, Date).self)
                return LivePresenceChange(tenant: tenant, person: person, email: email, online: false, lastSeen: seen, shown: shown)
            }
            try await Self.announce(changes, on: connection)
            return changes
        }
    }

    /// This server's presence rows, removed (a clean shutdown): its people offline unless elsewhere.
    public func leaveLive(server: UUID) async throws {
        try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            try await connection.query("UPDATE live_servers SET seen_at = '-infinity' WHERE id = \(server)")
        }
        try await reapLiveServers()
    }

    private static func announce(_ changes: [LivePresenceChange], on connection: PostgresConnection) async throws {
        for change in changes {
            guard let text = PostgresJSON(change).postgresText else { continue }
            try await connection.query("SELECT pg_notify(\(LivePresenceChange.channel), \(text))")
        }
    }
}

extension TenantSession {
    /// Whether `email` is online and when they were last seen, for `viewer`: 404 unless
    /// `AccessPolicy.maySeePresence`; someone hiding their presence is offline with no time.
    public func presence(of email: String, viewer: Person) async throws -> PresenceRecord {
        let rows = try await connection.query(
            """
            SELECT p.id, p.show_presence, p.last_seen_at,
                   EXISTS (SELECT FROM live_presence lp JOIN live_servers s ON s.id = lp.server_id
                           WHERE lp.tenant_id = p.tenant_id AND lp.person_id = p.id
                             AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval))),
                   \(presenceOf: .column("p.id"), visibleTo: .value(viewer.id))
            FROM people p WHERE p.tenant_id = \(tenantID) AND p.email = \(try Input.email(email))
            """)
        guard let row = rows.first else { throw StoreError(.notFound, "no person \(email) whose presence \(viewer.email) may see") }
        let (id, shown, lastSeen, online, shares) = try row.decode((UUID, Bool, Date?, Bool, Bool).self)
        guard AccessPolicy(viewer).maySeePresence(of: id, sharesTeamOrConversation: shares) else {
            throw StoreError(.notFound, "no person \(email) whose presence \(viewer.email) may see")
        }
        guard shown || id == viewer.id else { return PresenceRecord(online: false, lastSeen: nil) }
        return PresenceRecord(online: online, lastSeen: lastSeen)
    }

    /// Of `readers`, those who may see `subject`'s presence (for presence frames).
    public func presenceReaders(of subject: UUID, among readers: [UUID]) async throws -> [UUID] {
        guard !readers.isEmpty else { return [] }
        return try await connection.query(
            """
            SELECT r.person FROM unnest(\(readers)::uuid[]) AS r(person)
            WHERE r.person <> \(subject) AND \(presenceOf: .value(subject), visibleTo: .column("r.person"))
            """
        ).map { try $0.decode(UUID.self, at: 0) }
    }

    /// Hides or shows the person's presence to others.
    public func setShowPresence(_ shown: Bool, for person: Person) async throws {
        try await connection.query("UPDATE people SET show_presence = \(shown) WHERE tenant_id = \(tenantID) AND id = \(person.id)")
    }
}
