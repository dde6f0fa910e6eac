import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// An opening's write is planned once a connection (BENCHMARKS.md, "Statements planned
/// once a connection"): PostgreSQL's own choice planned it at every opening, every week of
/// notifications again; a mark of many items is planned for their number. One item is written
/// from a row of values, more from arrays. Counted by the
/// server (`pg_prepared_statements`), on a store of one connection.
@Suite struct InboxStatementPlansTests {
    @Test func anOpeningsWriteIsPlannedOnceAConnectionAndAMarkOfManyForItsNumber() async throws {
        try await TestDatabase.withStore(poolSize: 1) { store, configuration in
            try await DispatchHarness.with(store: store, configuration: configuration) { harness in
                let runs = 8
                for n in 1...runs { _ = try await harness.assign(to: "chidi@acme.test", name: "Job \(n)") }
                _ = try await harness.drain()
                let chidi = try await store.withTenant(harness.tenant) { try await $0.person(email: "chidi@acme.test") }
                let items = try await store.withTenant(harness.tenant) { try await $0.inbox(of: chidi, filter: .init()) }
                #expect(items.count == runs)
                for item in items {
                    let change = try await store.withTenant(harness.tenant) {
                        try await $0.reportOpened(item.id, by: chidi.id, device: nil, action: nil)
                    }
                    #expect(change.ids == [item.id])
                }
                #expect(try await store.withTenant(harness.tenant) { try await $0.inboxCounts(of: chidi.id) }.unread == 0)
                // Everything marked at once, more than `engagementPlannedOnce`: planned for their number.
                let many = TenantSession.engagementPlannedOnce + 1
                for n in runs..<many { _ = try await harness.assign(to: "chidi@acme.test", name: "Job \(n + 1)") }
                _ = try await harness.drain()
                // The new ones read (a few, on the kept plan), then all of them unread, read, unread.
                let marks: [(InboxEngagement.Change, Int)] = [(.read, many - runs), (.unread, many), (.read, many), (.unread, many)]
                for (change, count) in marks {
                    let changed = try await store.withTenant(harness.tenant) {
                        try await $0.markInbox(of: chidi.id, change, .before(Date()), device: nil)
                    }
                    #expect(changed.ids.count == count)
                }
                let plans = try await store.pool.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT statement LIKE '%(VALUES (%', generic_plans, custom_plans FROM pg_prepared_statements
                        WHERE statement LIKE 'UPDATE notifications n%SET seen_at%' AND statement NOT LIKE '%pg_prepared_statements%'
                        ORDER BY 1 DESC
                        """
                    ).map { try $0.decode((Bool, Int, Int).self) }
                }
                // One item, a row of values; more, arrays: the first mark kept, the three of many planned.
                #expect(plans.map(\.0) == [true, false], "\(plans)")
                #expect(plans.first.map { ($0.1, $0.2) == (runs, 0) } == true, "kept, planned: \(plans)")
                #expect(plans.last.map { ($0.1, $0.2) == (1, marks.count - 1) } == true, "kept, planned: \(plans)")
            }
        }
    }
}
