import Foundation
import HeraldCore
import HeraldLoops

/// History's week partitions: made ahead, and dropped whole once the retention has passed;
/// and devices not registered again for `DeviceFreshness.removeAfter`, removed.
extension Dispatcher {
    static let historyUpkeepEvery: Duration = .seconds(3600)

    func historyLoop() async {
        var next = ContinuousClock.now
        while !isStopping {
            // Short waits: a stop signal taken by another loop must not leave this one asleep.
            guard ContinuousClock.now >= next else {
                await stopSignal.wait(timeout: .seconds(1))
                continue
            }
            next = .now + Self.historyUpkeepEvery
            do {
                let created = try await store.createHistoryPartitions()
                if created > 0 { logger.info("created history partitions", metadata: ["tables": "\(created)"]) }
                if let retention = configuration.historyRetention {
                    let prune = try await store.pruneHistory(retention, dryRun: false)
                    if !prune.dropped.isEmpty {
                        logger.notice(
                            "dropped expired history",
                            metadata: ["weeks": "\(prune.dropped.map(\.day.description).joined(separator: ","))", "retention": "\(retention)"])
                    }
                    if !prune.kept.isEmpty {
                        logger.warning(
                            "kept expired weeks of history that still have deliveries queued or being sent",
                            metadata: ["weeks": "\(prune.kept.map(\.description).joined(separator: ","))"])
                    }
                }
                let expired = try await store.removeExpiredDevices()
                if expired > 0 {
                    logger.notice(
                        "removed devices their apps have not registered again, and the tokens of Live Activities that ended",
                        metadata: ["devices": "\(expired)", "after": "\(store.deviceFreshness.removeAfter)"])
                }
                failures.history.succeeded()
            } catch {
                next = .now + RetryPause.after(failures: failures.history.failed(error))
            }
        }
    }
}
