import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDispatch
@testable import HeraldStore

/// History past its retention goes a week at a time: real fan-out writes events of past days
/// into those weeks' partitions, and a prune drops the expired weeks whole, but never a week
/// with a delivery still to send.
@Suite struct HistoryPruneTests {
    @Test func aPruneDropsExpiredWeeksWholeAndKeepsOnesStillSending() async throws {
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
            func day(_ age: Int) -> Date { Date().addingTimeInterval(-Double(age) * 86_400) }
            let placed = try await harness.store.pool.query(
                "SELECT d.tableoid::regclass::text FROM deliveries d ORDER BY 1"
            ).map { try $0.decode(String.self, at: 0) }
            #expect(Set(placed) == Set(ages.map { monday(of: day($0)).partition("deliveries") }))
            // One delivery of 20 days ago is waiting to be retried.
            try await harness.store.pool.query(
                """
                UPDATE deliveries SET status = 'queued', due_at = now() + interval '1 hour'
                WHERE tableoid = \(monday(of: day(20)).partition("deliveries"))::text::regclass
                """)

            // Each is an item of Chidi's inbox, counted unread.
            let chidi = try await harness.store.withTenant(harness.tenant) { try await $0.person(email: "chidi@acme.test") }
            #expect(try await harness.store.withTenant(harness.tenant) { try await $0.inboxCounts(of: chidi.id) }.unread == ages.count)

            let retention = try HistoryRetention(parsing: "7d", deliveryDeadline: .seconds(86_400))
            let partitionsBefore = try await harness.store.historyPartitions().map(\.day)
            // Expired: every week that ended at least 7 days ago; the one still sending is kept.
            let cutoff = Date().addingTimeInterval(-7 * 86_400)
            let expired = partitionsBefore.filter { start(of: $0).addingTimeInterval(7 * 86_400) <= cutoff }
            let kept = monday(of: day(20))
            #expect(expired.contains(kept) && expired.contains(monday(of: day(29))) && !expired.contains(monday(of: day(5))))
            let preview = try await harness.store.pruneHistory(retention, dryRun: true)
            #expect(preview.kept == [kept])
            #expect(preview.dropped.map(\.day) == expired.filter { $0 != kept })
            #expect(try await harness.store.historyPartitions().map(\.day) == partitionsBefore)

            let prune = try await harness.store.pruneHistory(retention, dryRun: false)
            #expect(prune.dropped.map(\.day) == preview.dropped.map(\.day) && prune.kept == [kept])
            let remaining = try await harness.store.historyPartitions().map(\.day)
            #expect(remaining.first == kept && remaining.contains(monday(of: day(7))) && !remaining.contains(monday(of: day(29))))
            #expect(remaining == prune.remaining)
            // The items of the weeks dropped left the counts with them.
            let (items, counts) = try await harness.store.withTenant(harness.tenant) {
                (try await $0.inbox(of: chidi, filter: .init(limit: 100)).count, try await $0.inboxCounts(of: chidi.id))
            }
            #expect(items < ages.count && counts.unread == items && counts.unseen == items, "\(items) items, \(counts)")
            // What is left still answers: history, stats and the outcome of what was kept.
            let left = ages.filter { !expired.contains(monday(of: day($0))) || $0 == 20 }
            let history = try await harness.history()
            #expect(history.count == left.count && history.filter { $0.status == "sent" }.count == left.count - 1)
            let stats = try await harness.store.dispatchStats(since: nil, tenant: "acme")
            #expect(stats.tenants.first?.deliveries["sent"] == left.count - 1 && stats.tenants.first?.deliveries["queued"] == 1)
            // Partitions ahead are made once.
            #expect(try await harness.store.createHistoryPartitions() == 0)
        }
    }
}

/// The Monday (UTC) of the week `date` falls in: the name of its history partitions.
func monday(of date: Date) -> LocalDate {
    var calendar = Calendar(identifier: .iso8601)
    calendar.timeZone = .gmt
    let start = calendar.dateInterval(of: .weekOfYear, for: date)?.start ?? date
    return LocalDate(start, in: .gmt)
}

/// When a UTC day begins.
func start(of day: LocalDate) -> Date {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = .gmt
    return calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day)) ?? .distantFuture
}

extension LocalDate {
    /// The name of this Monday's partition of `table`.
    func partition(_ table: String) -> String {
        "\(table)_\(description.replacingOccurrences(of: "-", with: ""))"
    }
}
