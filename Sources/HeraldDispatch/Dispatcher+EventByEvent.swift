import Foundation
import HeraldCore
import HeraldStore
import Logging

/// After a batch failed with an error its events' rows may raise (`FanOutFailure`), the
/// next batch is written event by event, each in a savepoint: the events that go through
/// are committed with the batch, and each one that fails on its own is counted against
/// itself, so that an event at fault is passed over after `fanOutAttempts` instead of
/// holding every event behind it forever.
extension Dispatcher {
    /// What a batch written event by event found.
    struct EventByEvent {
        var written = 0
        var failed: [(event: ClaimedEvent, error: any Error)] = []
    }

    /// Failures counted against events, and events passed over, in one transaction: added
    /// to the counters and metrics once it is committed (`count(_:)`).
    struct FailureCount {
        var counted = 0
        var passedOver = 0

        mutating func add(counted: Int, passedOver: Int) {
            self.counted += counted
            self.passedOver += passedOver
        }

        mutating func add(_ other: FailureCount) { add(counted: other.counted, passedOver: other.passedOver) }
    }

    func count(_ failures: FailureCount) {
        guard failures.counted > 0 || failures.passedOver > 0 else { return }
        state.withLock { $0.fanOutFailed(counted: failures.counted, passedOver: failures.passedOver) }
        metrics.fanOutFailed(counted: failures.counted, passedOver: failures.passedOver)
    }

    /// Writes a tenant's share of a batch one event at a time, each in a savepoint. An
    /// event whose write fails with an error of its own is rolled back to its savepoint and
    /// added to `found`; any other error ends the batch.
    func fanOutEventByEvent(
        _ readable: [(ClaimedEvent, FanOut.Payload)], tenant: UUID, room: Int,
        into found: inout EventByEvent, in transaction: FanOutTransaction
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        var created = 0
        var claimed: [ClaimedDelivery] = []
        for (event, payload) in readable {
            // (The tenant's scope, when still deferred, is set before the savepoint, and
            // stays when the event's work is rolled back.)
            do {
                let written = try await transaction.savepoint {
                    try await fanOutTogether([(event, payload)], tenant: tenant, room: room - claimed.count, in: transaction)
                }
                created += written.created
                claimed += written.claimed
                found.written += 1
            } catch let error where FanOutFailure.mayBeTheEvents(error) {
                found.failed.append((event, error))
            }
        }
        return (created, claimed)
    }

    /// Counts the failures a batch written event by event found, in its transaction; an
    /// event that reached `fanOutAttempts` is marked fanned out with its error.
    /// - Returns: what it counted.
    /// - Throws: the first failure, when they are not counted (`FanOutFailure.counts`):
    ///   the batch is rolled back and tried again later.
    func countFailures(_ found: EventByEvent, in transaction: FanOutTransaction) async throws -> FailureCount {
        guard let first = found.failed.first else { return FailureCount() }
        guard FanOutFailure.counts(failed: found.failed.count, written: found.written) else { throw first.error }
        let passed = Set(
            try await transaction.recordFanOutFailures(
                found.failed.map { ($0.event.tenantID, $0.event.id, FanOutFailure.recorded($0.error)) },
                limit: configuration.fanOutAttempts))
        for (event, error) in found.failed {
            let metadata: Logger.Metadata = ["event": "\(event.id)", "tenant": "\(event.tenantID)", "error": "\(error)"]
            if passed.contains(event.id) {
                logger.error("passing over an event whose fan-out keeps failing; it stays in the outbox with its error", metadata: metadata)
            } else {
                logger.warning("an event's fan-out failed on its own; it will be tried again", metadata: metadata)
            }
        }
        return FailureCount(counted: found.failed.count, passedOver: passed.count)
    }

    /// Counts a large event's failed fan-out against it (`FanOutFailure`), in a transaction
    /// of its own.
    /// - Returns: whether the event is passed over now.
    func countFailure(of large: LargeEvent, _ error: any Error) async throws -> Bool {
        let event = large.event
        let passed = try await queue.withTransaction { transaction in
            try await transaction.recordFanOutFailures(
                [(event.tenantID, event.id, FanOutFailure.recorded(error))], limit: configuration.fanOutAttempts)
        }
        count(FailureCount(counted: 1, passedOver: passed.count))
        guard passed.contains(event.id) else { return false }
        logger.error(
            "passing over a large event whose fan-out keeps failing; the parts written stay, and it stays in the outbox with its error",
            metadata: ["event": "\(event.id)", "tenant": "\(event.tenantID)", "error": "\(error)"])
        return true
    }
}
