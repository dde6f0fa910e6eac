import Foundation
import HeraldCore
import HeraldEmulator
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

@Suite struct LargeGroupTests {
    /// One message to a 10,000-person group: set-based fan-out, every notification
    /// recorded, every push accepted by the emulator. Prints how long each part took.
    @Test func aMessageToTenThousandPeople() async throws {
        try await LoadTests.oneAtATime {
            try await DispatchHarness.with { harness in
                let tenant = harness.tenant.id
                let conversation = try await harness.store.withTenant(harness.tenant) { session -> UUID in
                    let team = try await session.team(slug: "ops")
                    let alice = try await session.person(email: "alice@acme.test")
                    try await session.connection.query(
                        """
                        WITH people AS (
                            INSERT INTO people (tenant_id, id, email, display_name)
                            SELECT \(tenant), gen_random_uuid(), 'crowd' || g || '@acme.test', 'Crowd ' || g FROM generate_series(1, 10000) g
                            RETURNING id
                        ), members AS (
                            INSERT INTO team_members (tenant_id, team_id, person_id, role) SELECT \(tenant), \(team.id), id, 'member' FROM people
                        )
                        INSERT INTO devices (tenant_id, id, person_id, token, app, platform, provider)
                        SELECT \(tenant), gen_random_uuid(), id, 'crowd-token-' || id, 'member', 'android', 'fcm' FROM people
                        """)
                    let id = UUID.v7()
                    try await session.connection.query(
                        """
                        INSERT INTO conversations (tenant_id, id, team_id, kind, name, created_by)
                        VALUES (\(tenant), \(id), \(team.id), 'group', 'Everyone', \(alice.id))
                        """)
                    try await session.connection.query(
                        """
                        INSERT INTO conversation_participants (tenant_id, conversation_id, person_id)
                        SELECT \(tenant), \(id), person_id FROM team_members WHERE tenant_id = \(tenant) AND team_id = \(team.id)
                        """)
                    return id
                }
                // Bulk-loaded rows have no statistics yet; in production autovacuum has them.
                try await harness.store.pool.query("ANALYZE people, team_members, devices, conversation_participants")
                _ = try await harness.store.withTenant(harness.tenant) {
                    try await $0.sendMessage(
                        actor: "alice@acme.test", conversation: conversation, text: "All hands at noon", clientID: nil, sentAt: nil)
                }
                try await harness.withDispatcher(.init(concurrency: 256, claimBatch: 256, retry: RetryPolicy(base: .milliseconds(50)))) {
                    dispatcher in
                    let started = ContinuousClock.now
                    let (events, queued) = try await dispatcher.fanOutOnce()
                    let fannedOut = started.duration(to: .now)
                    #expect(events == 1)
                    #expect(queued == 10_000)  // the crowd's phones; Chidi and Dana (also in ops) have none
                    try await dispatcher.run(.drain(horizon: .seconds(5)))
                    let total = started.duration(to: .now)
                    print("10,000-person group: fan-out \(fannedOut), every outcome recorded after \(total) (debug build)")
                }
                #expect(try await harness.count("SELECT count(*) FROM notifications") == 10_002)
                #expect(try await harness.count("SELECT count(*) FROM notifications WHERE status = 'no_device'") == 2)
                #expect(try await harness.count("SELECT count(*) FROM deliveries WHERE status = 'sent'") == 10_000)
                let tokens = Set(await harness.emulator.messages().map(\.token))
                #expect(tokens.count == 10_000)
            }
        }
    }
}
