import Foundation
import HeraldCore
import HeraldTestSupport

@testable import HeraldStore

/// A tenant with one team: a manager (Alice), two members (Chidi, Dana), and a second team
/// with its own manager (Erin).
struct WorkflowFixture {
    let store: Store
    let tenant: Tenant

    static func make(_ store: Store, slug: String = "acme") async throws -> WorkflowFixture {
        let tenant = try await store.createTenant(slug: slug, name: "Acme")
        try await store.withTenant(tenant) { session in
            try await addAcmePeople(session)
        }
        return WorkflowFixture(store: store, tenant: tenant)
    }

    func run<Result>(_ body: (TenantSession) async throws -> Result) async throws -> Result {
        try await store.withTenant(tenant, body)
    }

    func assign(priority: Priority = .p0, to assignee: String = "chidi@acme.test") async throws -> ActivityRecord {
        try await run {
            try await $0.assignActivity(
                actor: "alice@acme.test", team: "ops", assignee: assignee, name: "Ship v2", deadline: try Input.date("2026-11-28"), priority: priority
            )
        }
    }

    func act(_ action: ActivityAction, _ id: UUID, by email: String, reason: String? = nil) async throws -> ActivityRecord {
        try await run { try await $0.act(action, on: id, actor: email, reason: reason) }
    }

    /// Counts of rows that any write would have added to.
    func footprint() async throws -> [Int] {
        try await store.pool.withConnection { connection in
            var counts: [Int] = []
            for table in ["activities", "activity_transitions", "outbox", "people", "teams", "team_members", "devices"] {
                counts.append(try await connection.query("SELECT count(*) FROM \(identifier: table)").single().decode(Int.self, at: 0))
            }
            return counts
        }
    }
}
