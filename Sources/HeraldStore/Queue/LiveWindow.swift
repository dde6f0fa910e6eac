import Foundation
import HeraldCore
import Synchronization

/// The ids among which deliveries still to send lie: from `herald_live_floor()` (the start of
/// the oldest week with one, read again every few seconds) to two days ahead. The queue's
/// statements name it, so that PostgreSQL plans and reads those weeks' partitions only, not
/// every week of history kept.
final class LiveWindow: Sendable {
    /// Until the floor is first read: every partition.
    private let floor = Mutex(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    var lower: UUID { floor.withLock { $0 } }
    var upper: UUID { HistoryRetention.idCeiling() }

    func update(_ lower: UUID) {
        floor.withLock { $0 = lower }
    }
}
