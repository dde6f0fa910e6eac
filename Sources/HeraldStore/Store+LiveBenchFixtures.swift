import Foundation
import HeraldCore
import HeraldPostgres

/// The crowd `herald bench live` opens sockets for, written set-based (docs/operating/benchmarks
/// in BENCHMARKS.md): nothing else uses it.
public struct LiveCrowd: Sendable {
    /// Everyone, in order: `live<n>@bench.test`.
    public let emails: [String]
    /// The group of the first `group` people (its team is `crew`).
    public let group: UUID
    /// A direct conversation of two people of one team, outside the group.
    public let direct: UUID
    public let pair: (String, String)
}

extension TenantSession {
    /// `people` people (`live0@bench.test`…) in teams of `teamSize` (`t0`, `t1`…); the first
    /// `group` of them also in team `crew` and its group; each person in `conversationsEach`
    /// conversations of `conversationSize` people (round `r` puts person `n` with those whose
    /// `n × a_r mod people` is near theirs, `a_r` prime to `people`, so each round pairs
    /// different people); and one direct conversation of two teammates outside the group.
    public func addLiveCrowd(people: Int, teamSize: Int, group: Int, conversationsEach: Int, conversationSize: Int) async throws -> LiveCrowd {
        let teams = (people + teamSize - 1) / teamSize
        try await connection.query(
            """
            INSERT INTO teams (tenant_id, id, slug, name)
            SELECT \(tenantID), gen_random_uuid(), 't' || g, 'Team ' || g FROM generate_series(0, \(teams - 1)) g
            """)
        let crew = try await createTeam(slug: "crew", name: "Crew")
        try await connection.query(
            """
            WITH added AS (
                INSERT INTO people (tenant_id, id, email, display_name)
                SELECT \(tenantID), gen_random_uuid(), 'live' || g || '@bench.test', 'Live ' || g FROM generate_series(0, \(people - 1)) g
                RETURNING id, split_part(split_part(email, '@', 1), 'live', 2)::int AS n
            ), teams AS (
                INSERT INTO team_members (tenant_id, team_id, person_id, role)
                SELECT \(tenantID), t.id, a.id, 'member' FROM added a JOIN teams t ON t.tenant_id = \(tenantID) AND t.slug = 't' || (a.n / \(teamSize))
            )
            INSERT INTO team_members (tenant_id, team_id, person_id, role)
            SELECT \(tenantID), \(crew.id), id, 'member' FROM added WHERE n < \(group)
            """)
        let emails = (0..<people).map { "live\($0)@bench.test" }
        let first = try await person(email: emails[0])
        let groupID = try await addBulkGroup(of: crew, by: first, name: "Crew")
        if conversationsEach > 0, conversationSize >= 2 {
            var multipliers: [Int] = []
            var candidate = 1
            while multipliers.count < conversationsEach {
                if Self.greatestCommonDivisor(candidate, people) == 1 { multipliers.append(candidate) }
                candidate += 2
            }
            try await connection.query(
                """
                WITH slots AS (
                    SELECT r, (p.n::bigint * m.a) % \(people) / \(conversationSize) AS slot, p.id
                    FROM (SELECT split_part(split_part(email, '@', 1), 'live', 2)::int AS n, id
                          FROM people WHERE tenant_id = \(tenantID) AND email LIKE 'live%') p
                    CROSS JOIN unnest(\(multipliers)::int[]) WITH ORDINALITY AS m(a, r)
                ), rooms AS (
                    SELECT r, slot, gen_random_uuid() AS id FROM (SELECT DISTINCT r, slot FROM slots) d
                ), created AS (
                    INSERT INTO conversations (tenant_id, id, team_id, kind, name, created_by)
                    SELECT \(tenantID), c.id, \(crew.id), 'group', 'Small ' || c.r || '-' || c.slot, \(first.id) FROM rooms c
                )
                INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
                SELECT \(tenantID), c.id, s.id FROM slots s JOIN rooms c ON c.r = s.r AND c.slot = s.slot
                """)
        }
        // Two teammates outside the group (the last two people, or the first two when everyone is in it).
        let pair = people - group >= 2 && (people - 2) / teamSize == (people - 1) / teamSize ? (people - 2, people - 1) : (0, 1)
        let direct = try await createConversation(actor: emails[pair.0], with: [emails[pair.1]], name: nil, photoURL: nil, team: nil)
        return LiveCrowd(emails: emails, group: groupID, direct: direct.id, pair: (emails[pair.0], emails[pair.1]))
    }

    /// `group` (a crowd's, of `addLiveCrowd`) and its team grown to the first `size` people of
    /// the crowd, in two statements and with no ANALYZE, as a team grows while servers run.
    public func growLiveGroup(_ group: UUID, to size: Int) async throws {
        try await connection.query(
            """
            WITH grown AS (
                SELECT id FROM people
                WHERE tenant_id = \(tenantID) AND email LIKE 'live%' AND split_part(split_part(email, '@', 1), 'live', 2)::int < \(size)
            ), joined AS (
                INSERT INTO team_members (tenant_id, team_id, person_id, role)
                SELECT \(tenantID), (SELECT team_id FROM conversations WHERE tenant_id = \(tenantID) AND id = \(group)), id, 'member' FROM grown
                ON CONFLICT DO NOTHING
            )
            INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
            SELECT \(tenantID), \(group), id FROM grown
            ON CONFLICT DO NOTHING
            """)
    }

    static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        b == 0 ? a : greatestCommonDivisor(b, a % b)
    }

    /// How many of the tenant's people are online now (on any live server).
    public func onlineCount() async throws -> Int {
        try await connection.query(
            "SELECT count(DISTINCT person_id)::int FROM live_presence WHERE tenant_id = \(tenantID)"
        ).single().decode(Int.self, at: 0)
    }
}
