import ArgumentParser
import Foundation
import HeraldCore
import HeraldStore

/// `herald history prune`: drops the weeks of history past the retention, whole.
struct HistoryPruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Drop the weeks of history (notifications, deliveries, attempts) older than the retention.",
        discussion: """
            History is kept in one partition per UTC week (Monday to Sunday); a week is dropped whole once all of it is older than the \
            retention (HERALD_HISTORY_RETENTION, default 90d, at least 2d and at least the delivery deadline). \
            Workers do this hourly by themselves; this does it now. A week with a delivery still queued or being sent \
            is kept. For operators: works across tenants, on the database itself.
            """)

    @Option(help: "Keep this much history (default: HERALD_HISTORY_RETENTION, or 90d).") var retention: String?
    @Option(help: "The workers' delivery deadline: the retention may not be shorter (default 24h).") var deadline = "24h"
    @Flag(help: "Only say what would be dropped.") var dryRun = false
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let deadline = try Input.duration(deadline, field: "deadline")
        let retention =
            try retention.map { try HistoryRetention(parsing: $0, deliveryDeadline: deadline, field: "--retention") }
            ?? HistoryRetention.from(environment: heraldEnvironment().variables, deliveryDeadline: deadline)
        let started = ContinuousClock.now
        let prune = try await withStore { try await $0.pruneHistory(retention, dryRun: dryRun) }
        let elapsed = started.duration(to: .now)
        if options.json { return try printJSON(Summary(prune, elapsed: elapsed)) }
        let verb = dryRun ? "would drop" : "dropped"
        if let first = prune.dropped.first, let last = prune.dropped.last {
            let notifications = prune.dropped.reduce(0) { $0 + $1.notifications }
            print(
                "\(verb) \(prune.dropped.count) week(s) of history older than \(retention): weeks of "
                    + "\(first.day) … \(last.day), about \(notifications) notifications"
                    + (dryRun ? "" : String(format: ", in %.0f ms", elapsed.timeInterval * 1000)))
        } else {
            print("nothing to drop: no week of history is older than \(retention)")
        }
        if !prune.kept.isEmpty {
            print("kept \(prune.kept.map(\.description).joined(separator: ", ")): deliveries still queued or being sent")
        }
        if let first = prune.remaining.first, let last = prune.remaining.last {
            print("history now has \(prune.remaining.count) week(s): weeks of \(first) … \(last)")
        }
    }

    struct Summary: Encodable {
        let retention: String
        let dryRun: Bool
        let dropped: [Day]
        let kept: [String]
        let remaining: [String]
        let milliseconds: Double

        struct Day: Encodable {
            let day: String
            let notifications: Int
        }

        init(_ prune: HistoryPrune, elapsed: Duration) {
            retention = prune.retention.description
            dryRun = prune.dryRun
            dropped = prune.dropped.map { Day(day: $0.day.description, notifications: $0.notifications) }
            kept = prune.kept.map(\.description)
            remaining = prune.remaining.map(\.description)
            milliseconds = elapsed.timeInterval * 1000
        }
    }
}
