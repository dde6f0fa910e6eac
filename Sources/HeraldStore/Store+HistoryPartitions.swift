import Foundation
import HeraldCore
import HeraldPostgres

/// One UTC week of history: the partitions of notifications, deliveries and attempts that
/// hold the notifications fanned out for events of that week.
public struct HistoryPartition: Sendable, Hashable {
    /// The week's Monday (its partitions' names end with it).
    public let day: LocalDate
    /// The planner's estimate (0 before the partition was first analyzed).
    public let notifications: Int
}

/// What `Store.pruneHistory` dropped, or would drop.
public struct HistoryPrune: Sendable {
    public struct Day: Sendable, Hashable {
        public let day: LocalDate
        public let notifications: Int
    }

    public let retention: HistoryRetention
    public let dryRun: Bool
    /// Dropped (or, in a dry run, expired and droppable), by Monday.
    public let dropped: [Day]
    /// Expired, but kept: a delivery of theirs is still queued or being sent (by Monday).
    public let kept: [LocalDate]
    public let remaining: [LocalDate]
}

extension Store {
    /// The weeks history has partitions for (by their Monday), oldest first.
    public func historyPartitions() async throws -> [HistoryPartition] {
        try await pool.query("SELECT day::text, notifications FROM herald_history_partitions()").compactMap { row in
            let (day, notifications) = try row.decode((String, Int).self)
            return LocalDate(day).map { HistoryPartition(day: $0, notifications: notifications) }
        }
    }

    /// Makes the partitions of the weeks of today and the next `HistoryRetention.daysAhead`
    /// days that do not exist yet. Any number of workers may call this at once.
    /// - Returns: how many tables it created.
    @discardableResult
    public func createHistoryPartitions(at now: Date = Date()) async throws -> Int {
        let (first, last) = HistoryRetention.daysToCreate(at: now)
        return try await pool.query(
            "SELECT herald_create_history_partitions(\(first.description)::date, \(last.description)::date)"
        ).single().decode(Int.self, at: 0)
    }

    /// Drops whole the weeks of history `retention` has passed at `now` (never a week with a
    /// delivery still queued or being sent), and the closed digests of those weeks; with
    /// `dryRun`, only says which.
    public func pruneHistory(_ retention: HistoryRetention, at now: Date = Date(), dryRun: Bool) async throws -> HistoryPrune {
        let partitions = try await historyPartitions()
        let expired = Set(retention.expired(partitions.map(\.day), at: now))
        var dropped: [HistoryPrune.Day] = []
        var kept: [LocalDate] = []
        for partition in partitions where expired.contains(partition.day) {
            if dryRun {
                let live = try await pool.query("SELECT herald_history_partition_live(\(partition.day.description)::date)")
                    .single().decode(Bool.self, at: 0)
                if live { kept.append(partition.day) } else { dropped.append(.init(day: partition.day, notifications: partition.notifications)) }
                continue
            }
            let held = try await pool.query("SELECT herald_drop_history_partition(\(partition.day.description)::date)")
                .single().decode(Int?.self, at: 0)
            if let held {
                dropped.append(.init(day: partition.day, notifications: held))
            } else {
                kept.append(partition.day)
            }
        }
        let gone = Set(dryRun ? [] : dropped.map(\.day))
        // Digests closed before the oldest week kept: their items and their push went with
        // their weeks (a digest's push is in the week it opened).
        if !gone.isEmpty, let oldest = partitions.map(\.day).filter({ !gone.contains($0) }).min() {
            try await pool.query(
                "DELETE FROM digests WHERE status IN ('sent', 'empty') AND opened_at < \(oldest.description)::date")
        }
        return HistoryPrune(
            retention: retention, dryRun: dryRun, dropped: dropped, kept: kept,
            remaining: partitions.map(\.day).filter { !gone.contains($0) })
    }
}
