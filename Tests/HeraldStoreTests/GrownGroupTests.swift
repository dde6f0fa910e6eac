import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A message to a group that grew while the server's connections kept their plans (a team of
/// four, then of 2,000): the work of sending it follows the group, not the group times the
/// team. Measured in rows PostgreSQL read from the team (its statistics counters), never in
/// time. A plan made for four people looked the team up by (tenant, team) alone for every
/// participant: 4 million rows and a second a message.
@Suite struct GrownGroupTests {
    /// Rows of `team_members` this database's backends have fetched by index so far.
    static func teamRowsRead(_ store: Store) async throws -> Int {
        try await store.pool.query("SELECT pg_stat_clear_snapshot()")
        return try await store.pool.query(
            "SELECT coalesce(idx_tup_fetch, 0)::int + coalesce(seq_tup_read, 0)::int FROM pg_stat_user_tables WHERE relname = 'team_members'"
        ).single().decode(Int.self, at: 0)
    }

    @Test func aMessageToAGroupThatGrewReadsEachParticipantsRoleOnce() async throws {
        // One connection: the plans kept are those every send uses.
        try await TestDatabase.withStore(poolSize: 1) { store, _ in
            let tenant = try await store.createTenant(slug: "grow", name: "Grow")
            let group = try await store.withTenant(tenant) { session -> UUID in
                _ = try await session.createTeam(slug: "ops", name: "Ops")
                for (index, role) in [TeamRole.manager, .member, .member, .member].enumerated() {
                    _ = try await session.addPerson(email: "p\(index)@grow.test", name: "P\(index)")
                    _ = try await session.setMembership(team: "ops", email: "p\(index)@grow.test", role: role)
                }
                return try await session.createConversation(
                    actor: "p0@grow.test", with: ["p1@grow.test", "p2@grow.test", "p3@grow.test"], name: "Site Team", photoURL: nil, team: "ops"
                ).id
            }
            // Enough sends for the connection to keep a plan made for four people.
            for index in 0..<10 {
                _ = try await store.withTenant(tenant) {
                    try await $0.sendMessage(actor: "p0@grow.test", conversation: group, text: "small \(index)", clientID: nil, sentAt: nil)
                }
            }
            _ = try await store.withTenant(tenant) { session in
                try await session.connection.query(
                    """
                    WITH added AS (
                        INSERT INTO people (tenant_id, id, email, display_name)
                        SELECT \(session.tenantID), gen_random_uuid(), 'x' || g || '@grow.test', 'X ' || g FROM generate_series(4, 1999) g
                        RETURNING id
                    ), joined AS (
                        INSERT INTO team_members (tenant_id, team_id, person_id, role)
                        SELECT \(session.tenantID), (SELECT id FROM teams WHERE slug = 'ops'), id, 'member' FROM added
                    )
                    INSERT INTO conversation_participants (tenant_id, conversation_id, person_id) SELECT \(session.tenantID), \(group), id FROM added
                    """)
            }
            let before = try await Self.teamRowsRead(store)
            let sent = try await store.withTenant(tenant) {
                try await $0.sendMessage(actor: "p0@grow.test", conversation: group, text: "to 2,000", clientID: nil, sentAt: nil)
            }
            #expect(sent.created)
            // The sending backend's counters reach the others once it is idle; forced here.
            try await store.pool.query("SELECT pg_stat_force_next_flush()")
            try await store.pool.query("SELECT 1")
            let read = try await Self.teamRowsRead(store) - before
            // A role a participant (2,000), and the few rows the send's other checks read.
            #expect(read >= 2_000 && read < 3_000, "\(read) rows of the team read for one message to 2,000 people")
        }
    }
}
