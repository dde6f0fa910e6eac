import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTestSupport
import Testing

@testable import HeraldStore

@Suite struct TenantIsolationTests {
    @Test func aTenantsTransactionSeesNoOtherTenantsRowsEvenWithoutAFilter() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store, slug: "acme")
            let globex = try await WorkflowFixture.make(store, slug: "globex")
            _ = try await acme.assign()
            _ = try await globex.assign()
            _ = try await globex.assign(priority: .p1)

            let tables = [
                "people", "teams", "team_members", "devices", "activities", "activity_transitions", "outbox", "template_overrides"
            ]
            try await store.withTenant(acme.tenant) { session in
                for table in tables {
                    let tenants = try await session.connection.query("SELECT DISTINCT tenant_id FROM \(identifier: table)")
                        .map { try $0.decode(UUID.self, at: 0) }
                    #expect(tenants.allSatisfy { $0 == acme.tenant.id }, "\(table)")
                }
                let activities = try await session.connection.query("SELECT count(*) FROM activities").single().decode(Int.self, at: 0)
                #expect(activities == 1)
                let asked = try await session.connection.query(
                    "SELECT count(*) FROM people WHERE tenant_id = \(globex.tenant.id)"
                ).single().decode(Int.self, at: 0)
                #expect(asked == 0)
            }
            // Writing another tenant's row is refused by the policy's WITH CHECK.
            let error = await #expect(throws: PostgresError.self) {
                try await store.withTenant(acme.tenant) { session in
                    try await session.connection.query(
                        "INSERT INTO teams (tenant_id, id, slug, name) VALUES (\(globex.tenant.id), \(UUID.v7()), 'sneaky', 'Sneaky')")
                }
            }
            #expect(error?.sqlState == "42501")
            // And the role cannot simply be switched off inside the transaction.
            let reset = await #expect(throws: PostgresError.self) {
                try await store.withTenant(acme.tenant) { session in
                    try await session.connection.query("ALTER TABLE people DISABLE ROW LEVEL SECURITY")
                }
            }
            #expect(reset?.sqlState == "42501")
        }
    }

    @Test func withNoTenantNamedTheApplicationRoleSeesNothing() async throws {
        try await TestDatabase.withStore { store, _ in
            _ = try await WorkflowFixture.make(store)
            let visible = try await store.pool.withTransaction { connection in
                try await connection.query("SET LOCAL ROLE herald_app")
                return try await connection.query("SELECT count(*) FROM people").single().decode(Int.self, at: 0)
            }
            #expect(visible == 0)
        }
    }

    @Test func theAuthenticatorReadsOnlyThePeopleTokensActAsAndNoActivities() async throws {
        try await TestDatabase.withStore { store, _ in
            let acme = try await WorkflowFixture.make(store)
            _ = try await acme.run { try await $0.createPersonToken(for: "chidi@acme.test", name: nil, lifetime: nil, by: "test") }
            let (people, emails) = try await store.pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
                let all = try await connection.query("SELECT count(*) FROM people").single().decode(Int.self, at: 0)
                let emails = try await connection.query("SELECT email FROM people").map { try $0.decode(String.self, at: 0) }
                return (all, emails)
            }
            #expect(people == 1 && emails == ["chidi@acme.test"])
            let refused = await #expect(throws: PostgresError.self) {
                try await store.pool.withTransaction(setup: DatabaseRole.authenticator.forTransaction) { connection in
                    try await connection.query("SELECT count(*) FROM activities")
                }
            }
            #expect(refused?.sqlState == "42501")
        }
    }
}
