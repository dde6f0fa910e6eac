import Foundation
import HeraldCore
import Testing

@testable import HeraldStore

/// History's SQL condition (`notificationVisibleTo`) pinned to `AccessPolicy.maySeeNotification`:
/// for every kind of viewer and every notification fan-out wrote, history shows exactly what
/// the rule allows.
@Suite struct HistoryAccessTests {
    @Test func historyShowsExactlyWhatThePolicyAllows() async throws {
        try await DispatchHarness.with { harness in
            // Notifications to Chidi and Dana (assigned) and to Alice (their starts), all in team ops.
            for assignee in ["chidi@acme.test", "dana@acme.test"] {
                let activity = try await harness.assign(to: assignee, name: "Ship \(assignee)")
                try await harness.act(.start, activity.id, by: assignee)
            }
            _ = try await harness.drain()
            let (all, ops) = try await harness.store.withTenant(harness.tenant) { session in
                (try await session.history(viewer: nil, filter: HistoryFilter(limit: 1_000)), try await session.team(slug: "ops"))
            }
            #expect(Set(all.map(\.recipient.email)) == ["chidi@acme.test", "dana@acme.test", "alice@acme.test"])
            let viewers: [String?] = [nil, "root@acme.test", "alice@acme.test", "chidi@acme.test", "dana@acme.test", "erin@acme.test"]
            for email in viewers {
                let (viewer, role, shown) = try await harness.store.withTenant(harness.tenant) { session -> (Person?, TeamRole?, Set<UUID>) in
                    var viewer: Person?
                    var role: TeamRole?
                    if let email {
                        viewer = try await session.person(email: email)
                        role = try await session.role(of: try #require(viewer).id, in: ops.id)
                    }
                    let shown = Set(try await session.history(viewer: viewer, filter: HistoryFilter(limit: 1_000)).map(\.id))
                    return (viewer, role, shown)
                }
                for entry in all {
                    let allowed = AccessPolicy(viewer).maySeeNotification(recipient: entry.recipient.id, role: role)
                    #expect(shown.contains(entry.id) == allowed, "\(email ?? "the tenant") and the notification to \(entry.recipient.email)")
                }
            }
        }
    }
}
