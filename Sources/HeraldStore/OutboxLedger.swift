import Foundation
import Synchronization

/// The outbox events one run of a tenant transaction wrote: what tells, when its `COMMIT`
/// went unanswered, whether it committed (`Store.committed(_:tenant:on:)`).
final class OutboxLedger: Sendable {
    private let ids = Mutex<[UUID]>([])

    /// Forgets the events of an earlier run (a transaction run again starts empty).
    func reset() { ids.withLock { $0 = [] } }

    func record(_ id: UUID) { ids.withLock { $0.append(id) } }

    var written: [UUID] { ids.withLock { $0 } }
}
