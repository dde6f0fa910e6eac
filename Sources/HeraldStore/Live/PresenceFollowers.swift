import Foundation
import HeraldCore
import HeraldPostgres

/// Someone's presence as another person may see it, with whom it is of.
public struct PersonPresence: Sendable, Equatable {
    public let person: UUID
    public let email: String
    public let presence: PresenceRecord

    public init(person: UUID, email: String, presence: PresenceRecord) {
        self.person = person
        self.email = email
        self.presence = presence
    }
}

/// The presence of people named at once (`GET /v1/presence`, `presence.subscribe`): those the
/// viewer may see, in the order named, and the names of everyone else.
public struct PresenceLookup: Sendable, Equatable {
    public var people: [PersonPresence] = []
    /// Names (as given) of nobody the viewer may see the presence of: unknown, or not sharing a
    /// team or conversation with them. Told apart from each other nowhere.
    public var unknown: [String] = []
    /// The tenant's departures as the lookup read them (`TenantSession.presenceDepartures`):
    /// whom it found visible stays so until the count moves.
    public var departures: Int64 = 0
}

/// A tenant's departures (`TenantSession.presenceDepartures`).
public struct PresenceDepartures: Sendable, Equatable {
    /// The number of the latest (0: nobody ever left).
    public var count: Int64 = 0
    /// Who left after the number asked about, with the number of their latest departure.
    public var departed: [UUID: Int64] = [:]
}

/// A subscriber and someone they follow.
public struct PresencePair: Sendable, Hashable {
    public let subscriber: UUID
    public let person: UUID

    public init(subscriber: UUID, person: UUID) {
        self.subscriber = subscriber
        self.person = person
    }
}

extension TenantSession {
    /// Who follows each of `subjects` by conversation (`PresenceFollowing`): the other
    /// participants of a conversation of at most `PresenceFollowing.smallConversation` people
    /// that both take part in now. One query for many changes: an index probe for each
    /// subject's conversations, one (stopping at the limit) for each conversation's size, and
    /// one for each small conversation's people; as many rows as there are such pairs, whatever
    /// the size of the teams or of the large conversations. The caller keeps those it has
    /// sockets of (joining a list of thousands of readers here made the planner misjudge the
    /// join and cost seconds at 10,000 people online).
    public func presenceFollowers(of subjects: [UUID]) async throws -> [UUID: [UUID]] {
        guard !subjects.isEmpty else { return [:] }
        var followers: [UUID: [UUID]] = [:]
        for row in try await connection.query(
            """
            SELECT DISTINCT t.person_id, f.person_id
            FROM unnest(\(Array(Set(subjects)))::uuid[]) AS s(id)
            JOIN conversation_participants t ON t.tenant_id = \(tenantID) AND t.person_id = s.id AND t.left_at IS NULL
            JOIN conversation_participants f ON f.tenant_id = t.tenant_id AND f.conversation_id = t.conversation_id
                 AND f.left_at IS NULL AND f.person_id <> t.person_id
            WHERE (SELECT count(*) FROM (SELECT FROM conversation_participants n
                                         WHERE n.tenant_id = t.tenant_id AND n.conversation_id = t.conversation_id AND n.left_at IS NULL
                                         LIMIT \(PresenceFollowing.smallConversation + 1)) AS counted) <= \(PresenceFollowing.smallConversation)
            """)
        {
            let (subject, reader) = try row.decode((UUID, UUID).self)
            followers[subject, default: []].append(reader)
        }
        return followers
    }

    /// The presence of the people `named` (each an id or an email) that `viewer` may see
    /// (`AccessPolicy.maySeePresence`), in the order named; someone hiding their presence is
    /// offline with no time. Everyone else is in `unknown`.
    public func presence(of named: [String], viewer: Person) async throws -> PresenceLookup {
        var ids: [UUID] = []
        var emails: [String] = []
        // Each name's key in `found`, checked once.
        var keys: [String?] = []
        keys.reserveCapacity(named.count)
        for name in named {
            if let id = UUID(uuidString: name) {
                ids.append(id)
                keys.append(id.lowercasedString)
            } else if let email = try? Input.email(name) {
                emails.append(email)
                keys.append(email)
            } else {
                keys.append(nil)
            }
        }
        var found: [String: PersonPresence] = [:]
        var departuresRead: Int64 = 0
        if !ids.isEmpty || !emails.isEmpty {
            for row in try await connection.query(
                """
                SELECT p.id, p.email, p.show_presence, p.last_seen_at,
                       EXISTS (SELECT FROM live_presence lp JOIN live_servers s ON s.id = lp.server_id
                               WHERE lp.tenant_id = p.tenant_id AND lp.person_id = p.id
                                 AND s.seen_at > now() - make_interval(secs => \(Store.liveServerLifetime.timeInterval)) OFFSET 0),
                       \(presenceOf: .column("p.id"), visibleTo: .value(viewer.id)),
                       (SELECT d.departures FROM presence_departures d WHERE d.tenant_id = \(tenantID))
                FROM people p WHERE p.tenant_id = \(tenantID) AND (p.id = ANY(\(ids)::uuid[]) OR p.email = ANY(\(emails)::text[]))
                """)
            {
                let (id, email, shown, lastSeen, online, shares, departures) = try row.decode(
                    (UUID, String, Bool, Date?, Bool, Bool, Int64?).self)
                // Read in the statement's snapshot, as the visibility is: one value for all rows.
                departuresRead = departures ?? 0
                guard AccessPolicy(viewer).maySeePresence(of: id, sharesTeamOrConversation: shares) else { continue }
                let record =
                    shown || id == viewer.id ? PresenceRecord(online: online, lastSeen: lastSeen) : PresenceRecord(online: false, lastSeen: nil)
                let presence = PersonPresence(person: id, email: email, presence: record)
                found[id.lowercasedString] = presence
                found[email] = presence
            }
        }
        var lookup = PresenceLookup()
        lookup.departures = departuresRead
        var seen: Set<UUID> = []
        for (name, key) in zip(named, keys) {
            guard let key, let presence = found[key] else {
                lookup.unknown.append(name)
                continue
            }
            if seen.insert(presence.person).inserted { lookup.people.append(presence) }
        }
        return lookup
    }

    /// The number of this tenant's latest departure (someone leaving a team or a conversation;
    /// numbered by triggers, sql/0046), and everyone who left after `since` with the number of
    /// their latest departure, as one snapshot saw them. While the number stays put nobody
    /// lost sight of anyone's presence; when it moves, only pairs with someone who left can have.
    public func presenceDepartures(since: Int64) async throws -> PresenceDepartures {
        var found = PresenceDepartures()
        for row in try await connection.query(
            """
            SELECT d.departures, p.person_id, p.departure FROM presence_departures d
            LEFT JOIN presence_departed p ON p.tenant_id = d.tenant_id AND p.departure > \(since)
            WHERE d.tenant_id = \(tenantID)
            """)
        {
            let (count, person, departure) = try row.decode((Int64, UUID?, Int64?).self)
            found.count = count
            if let person, let departure { found.departed[person] = departure }
        }
        return found
    }

    /// Of `pairs`, those in which the subscriber may still see the person's presence.
    public func presenceVisible(_ pairs: [(subscriber: UUID, person: UUID)]) async throws -> Set<PresencePair> {
        guard !pairs.isEmpty else { return [] }
        var visible: Set<PresencePair> = []
        for row in try await connection.query(
            """
            SELECT x.subscriber, x.person FROM unnest(\(pairs.map(\.subscriber))::uuid[], \(pairs.map(\.person))::uuid[]) AS x(subscriber, person)
            WHERE \(presenceOf: .column("x.person"), visibleTo: .column("x.subscriber"))
            """)
        {
            let (subscriber, person) = try row.decode((UUID, UUID).self)
            visible.insert(PresencePair(subscriber: subscriber, person: person))
        }
        return visible
    }
}
