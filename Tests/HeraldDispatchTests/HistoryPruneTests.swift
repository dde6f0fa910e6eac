import Foundation
import HeraldCore
@testable import HeraldDispatch
import HeraldStore
import HeraldTestSupport
import Testing

/// History past its retention goes a day at a time: real fan-out writes events of past days
/// into those days' partitions, and a prune drops the expired days whole, but never a day
/// with a delivery still to send.
@Suite struct HistoryPruneTests {
    @Test func aPruneDropsExpiredDaysWholeAndKeepsOnesStillSending() async throws {
        try await DispatchHarness.with { harness in
            try await harness.register("chidi@acme.test", token: "chidi-phone", app: .member)
            let today = LocalDate(Date(), in: .gmt)
            try await harness.store.pool.query(
                "SELECT herald_create_history_partitions(\(today.description)::date - 30, \(today.description)::date)")
            // Events of 0, 1, 5, 8, 20 and 29 days ago (their ids carry their time).
            let ages = [0, 1, 5, 8, 20, 29]
            for age in ages {
                let activity = try await harness.assign(priority: .p2, name: "Task \(age)")
                try await harness.store.pool.query(
                    """
                    UPDATE outbox SET id = herald_child_id(herald_uuid_floor(now() - make_interval(days => \(age)::int)), id::text)
                    WHERE activity_id = \(activity.id)
                    """)
            }
            let counters = try await harness.drain()
            #expect(counters.sent == ages.count)
            func day(_ age: Int) -> LocalDate { LocalDate(Date().addingTimeInterval(-Double(age) * 86_400), in: .gmt) }
            let placed = try await harness.store.pool.query(
                "SELECT d.tableoid::regclass::text FROM deliveries d ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(Set(placed) == Set(ages.map { day($0).partition("deliveries") }))
            // One delivery of 20 days ago is waiting to be retried.
            try await harness.store.pool.query(
                "UPDATE deliveries SET status = 'queued', due_at = now() + interval '1 hour' WHERE tableoid = \(day(20).partition("deliveries"))::text::regclass")

            let retention = try HistoryRetention(parsing: "7d", deliveryDeadline: .seconds(86_400))
            let partitionsBefore = try await harness.store.historyPartitions().map(\.day)
            let preview = try await harness.store.pruneHistory(retention, dryRun: true)
            // Every day that ended more than 7 days ago: 30 days ago through 8 days ago, less the one still sending.
            let expired = (8...30).map(day).sorted()
            #expect(preview.kept == [day(20)])
            #expect(preview.dropped.map(\.day) == expired.filter { $0 != day(20) })
            #expect(try await harness.store.historyPartitions().map(\.day) == partitionsBefore)

            let prune = try await harness.store.pruneHistory(retention, dryRun: false)
            #expect(prune.dropped.map(\.day) == preview.dropped.map(\.day) && prune.kept == [day(20)])
            let remaining = try await harness.store.historyPartitions().map(\.day)
            #expect(remaining.first == day(20) && remaining.contains(day(7)) && !remaining.contains(day(8)))
            #expect(remaining == prune.remaining)
            // What is left still answers: history, stats and the outcome of what was kept.
            let history = try await harness.history()
            #expect(history.count == 4 && history.filter { $0.status == "sent" }.count == 3)
            let stats = try await harness.store.dispatchStats(since: nil, tenant: "acme")
            #expect(stats.tenants.first?.deliveries["sent"] == 3 && stats.tenants.first?.deliveries["queued"] == 1)
            // Partitions ahead are made once.
            #expect(try await harness.store.createHistoryPartitions() == 0)
        }
    }
}

extension LocalDate {
    /// The name of this day's partition of `table`.
    func partition(_ table: String) -> String {
        "\(table)_\(description.replacingOccurrences(of: "-", with: ""))"
    }
}
