import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// Takes `email` out of team `slug` (docs/concepts.md#people-leave-teams): from now on they
    /// see nothing new of the team — its activities (unless assigned to them), the presence of
    /// its people, digest items of its activities — as every rule reads membership when it is
    /// asked; and they leave the team's group conversations (a system message in each says so),
    /// so its chat reaches them no more. What they were told until now stays in their history.
    /// Direct conversations, between two people, stay. Live servers are told to check the
    /// presence subscriptions at once (`LiveListener.Event.membership`, by the departure's
    /// trigger, sql/0047, as for any leave).
    /// - Returns: the membership that ended.
    /// - Throws: `StoreError.notFound` for an unknown team or person, or someone not in the team.
    public func removeMembership(team slug: String, email: String) async throws -> Membership {
        let team = try await team(slug: slug)
        let person = try await person(email: email)
        let removed = try await connection.query(
            """
            DELETE FROM team_members WHERE tenant_id = \(tenantID) AND team_id = \(team.id) AND person_id = \(person.id)
            RETURNING role
            """)
        guard let role = try removed.first?.decode(String.self, at: 0) else {
            throw StoreError(.notFound, "\(person.email) is not in team \(team.slug)")
        }
        let groups = try await connection.query(
            """
            SELECT c.id FROM conversations c
            JOIN conversation_participants cp ON cp.tenant_id = c.tenant_id AND cp.conversation_id = c.id
            WHERE c.tenant_id = \(tenantID) AND c.team_id = \(team.id) AND c.kind = 'group' AND cp.person_id = \(person.id)
              AND \(takingPart: "cp")
            ORDER BY c.id
            """
        ).map { try $0.decode(UUID.self, at: 0) }
        for group in groups {
            try await setLeft(person, conversation: group)
            try await addSystemMessage("\(person.name) left team \(team.name)", conversation: group, actor: person.id)
        }
        return Membership(team: team.slug, person: person.reference, role: try Self.decodeEnum(role))
    }

    /// The teams `person` is in, with their role in each, by slug.
    public func memberships(of person: Person) async throws -> [Membership] {
        try await connection.query(
            """
            SELECT t.slug, m.role FROM team_members m JOIN teams t ON t.tenant_id = m.tenant_id AND t.id = m.team_id
            WHERE m.tenant_id = \(tenantID) AND m.person_id = \(person.id) ORDER BY t.slug
            """
        ).map { row in
            let (slug, role) = try row.decode((String, String).self)
            return Membership(team: slug, person: person.reference, role: try Self.decodeEnum(role))
        }
    }
}
