import Foundation
import HeraldCore
import HeraldPostgres

extension LivePresenceChange {
    /// The NOTIFY channel the servers tell each other presence changes on (a hint like every
    /// NOTIFY: the table is the truth).
    public static let channel = "herald_presence"
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

    /// What this server holds sockets for changed: `online`, people it now has a socket of (and
    /// had not recorded); `offline`, people whose last socket here closed. One transaction for
    /// any number of them, so that a storm of sockets opening or closing is a few statements.
    /// - Returns: the changes others should see (not those online on another server), announced.
    public func liveRecordPresence(server: UUID, online: [LivePersonKey], offline: [LivePersonKey]) async throws -> [LivePresenceChange] {
        guard !online.isEmpty || !offline.isEmpty else { return [] }
        let lifetime = Self.liveServerLifetime.timeInterval
        return try await pool.withTransaction(setup: DatabaseRole.live.forTransaction) { connection in
            var changes: [LivePresenceChange] = []
            if !online.isEmpty {
                let rows = try await connection.query(
                    """
                    WITH added AS (
                        INSERT INTO live_presence (tenant_id, person_id, server_id)
                        SELECT w.tenant_id, w.person_id, \(server)
                        FROM unnest(\(online.map(\.tenant))::uuid[], \(online.map(\.person))::uuid[]) AS w(tenant_id, person_id)
                        ON CONFLICT DO NOTHING RETURNING tenant_id, person_id
                    )
                    SELECT p.tenant_id, p.id, p.email, p.show_presence
                    FROM added a JOIN people p ON p.tenant_id = a.tenant_id AND p.id = a.person_id
                    WHERE NOT EXISTS (SELECT FROM live_presence q JOIN live_servers s ON s.id = q.server_id
                                      WHERE q.tenant_id = a.tenant_id AND q.person_id = a.person_id AND q.server_id <> \(server)
                                        AND s.seen_at > now() - make_interval(secs => \(lifetime)))
                    """)
                for row in rows {
                    let (tenant, person, email, shown) = try row.decode((UUID, UUID, String, Bool).self)
                    changes.append(LivePresenceChange(tenant: tenant, person: person, email: email, online: true, lastSeen: nil, shown: shown))
                }
            }
            if !offline.isEmpty {
                // The people rows in one order, so that two servers' batches never wait on each other.
                let rows = try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM live_presence l
                        USING unnest(\(offline.map(\.tenant))::uuid[], \(offline.map(\.person))::uuid[]) AS g(tenant_id, person_id)
                        WHERE l.tenant_id = g.tenant_id AND l.person_id = g.person_id AND l.server_id = \(server)
                        RETURNING l.tenant_id, l.person_id
                    ), locked AS (
                        SELECT p.tenant_id, p.id FROM people p JOIN gone g ON g.tenant_id = p.tenant_id AND g.person_id = p.id
                        ORDER BY p.tenant_id, p.id FOR UPDATE OF p
                    )
                    UPDATE people p SET last_seen_at = now() FROM locked k
                    WHERE p.tenant_id = k.tenant_id AND p.id = k.id
                      AND NOT EXISTS (SELECT FROM live_presence q JOIN live_servers s ON s.id = q.server_id
                                      WHERE q.tenant_id = p.tenant_id AND q.person_id = p.id AND q.server_id <> \(server)
                                        AND s.seen_at > now() - make_interval(secs => \(lifetime)))
                    RETURNING p.tenant_id, p.id, p.email, p.show_presence, p.last_seen_at
                    """)
                for row in rows {
                    let (tenant, person, email, shown, lastSeen) = try row.decode((UUID, UUID, String, Bool, Date?).self)
                    changes.append(LivePresenceChange(tenant: tenant, person: person, email: email, online: false, lastSeen: lastSeen, shown: shown))
                }
            }
            try await Self.announce(changes, on: connection)
            return changes
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

    /// One notification a change (the listener reads one change from each), in one statement.
    static func announce(_ changes: [LivePresenceChange], on connection: PostgresConnection) async throws {
        let texts = changes.compactMap { PostgresJSON($0).postgresText }
        guard !texts.isEmpty else { return }
        try await connection.query("SELECT pg_notify(\(LivePresenceChange.channel), t) FROM unnest(\(texts)::text[]) AS t")
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
                             AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval)) OFFSET 0),
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

    /// Hides or shows the person's presence to others, and tells those who follow them at once
    /// (docs/live-protocol.md): hiding is "offline, no last-seen time" to every follower, showing
    /// again is their state as it is (online, or offline since when they were last seen).
    public func setShowPresence(_ shown: Bool, for person: Person) async throws {
        let rows = try await connection.query(
            """
            UPDATE people p SET show_presence = \(shown) WHERE p.tenant_id = \(tenantID) AND p.id = \(person.id) AND p.show_presence <> \(shown)
            RETURNING p.email, p.last_seen_at,
                      EXISTS (SELECT FROM live_presence lp JOIN live_servers s ON s.id = lp.server_id
                              WHERE lp.tenant_id = p.tenant_id AND lp.person_id = p.id
                                AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval)))
            """)
        guard let row = rows.first else { return }
        let (email, lastSeen, online) = try row.decode((String, Date?, Bool).self)
        // What followers see now: a change that is told (`shown`), whatever the person hides.
        let seen = LivePresenceChange(
            tenant: tenantID, person: person.id, email: email, online: shown && online, lastSeen: shown ? lastSeen : nil, shown: true)
        try await Store.announce([seen], on: connection)
    }
}
