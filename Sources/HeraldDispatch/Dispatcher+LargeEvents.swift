import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates

/// Large events (a big group's message): leased when claimed, then fanned out part by part,
/// a transaction each, under the worker's lease on the event.
extension Dispatcher {
    /// What became of one part of a large event.
    enum PartOutcome {
        case written(Int)
        /// Another worker holds the event now.
        case passed
        /// Its recipients (from this position on) cannot be read: the event is marked done.
        case unreadable(from: Int)
    }

    /// An event fanned out part by part, under this worker's lease on it.
    struct LargeEvent: Sendable {
        let event: ClaimedEvent
        let snapshot: FanOut.Payload.Snapshot
        let recipientCount: Int
        /// (Read when the event is claimed: read from `snapshot` in `fanOutLarge`, it crashed
        /// Swift 6.3's optimizer in a release build, "Found ownership error".)
        let conversation: UUID?
    }

    /// Fans out a large event part by part (`fanOutParts`), a transaction each: the first
    /// part alone (its pushes go out while the rest is written), then the middle parts up to
    /// `fanOutConcurrency` at once, then the last, which marks the event done once every
    /// other part is committed. Each part first checks that this worker still holds the
    /// event, and renews the lease as it ends: if the lease lapsed and another worker took
    /// the event, that one carries on (a part written twice adds nothing: the write is
    /// idempotent). If a part fails, the worker's event leases are given back; a failure
    /// the event's own rows may raise is counted against it (`FanOutFailure`), and after
    /// `fanOutAttempts` of them the event is passed over.
    /// - Returns: how many deliveries it created.
    func fanOutLarge(_ large: LargeEvent, claiming: Bool) async throws -> Int {
        let parts = configuration.fanOutParts(of: large.recipientCount)
        // The first alone, the middle ones at once, the last alone.
        let groups = parts.count < 2 ? [parts] : [[parts[0]], Array(parts.dropFirst().dropLast()), [parts[parts.count - 1]]]
        var created = 0
        do {
            for group in groups {
                guard let written = try await fanOutParts(group, of: large, claiming: claiming) else { return created }
                created += written
            }
            return created
        } catch {
            // (Passed over, it is marked done; the batch's other large events go on.)
            if FanOutFailure.mayBeTheEvents(error), (try? await countFailure(of: large, error)) == true { return created }
            // Give back this event and any other large one of the batch not started yet: any
            // worker may take them at once rather than when their leases run out.
            try? await queue.releaseEventLeases()
            throw error
        }
    }

    /// Writes `parts` of a large event, up to `fanOutConcurrency` at once. A part that finds
    /// the event passed to another worker, or its recipients unreadable, starts no more parts;
    /// those already under way finish (each is whole, and the write is idempotent).
    /// - Returns: how many deliveries they created, or `nil` when the event passed to
    ///   another worker or its recipients cannot be read (nothing more is to be done).
    func fanOutParts(_ parts: [Range<Int>], of large: LargeEvent, claiming: Bool) async throws -> Int? {
        try await withThrowingTaskGroup(of: PartOutcome.self) { group in
            var pending = parts[...]
            var created = 0
            var stopped = false
            for _ in 0..<configuration.fanOutConcurrency {
                guard let part = pending.popFirst() else { break }
                group.addTask { try await self.fanOutPart(part, of: large, claiming: claiming) }
            }
            while let outcome = try await group.next() {
                switch outcome {
                case .passed:
                    if !stopped { logger.info("a large event passed to another worker mid-fan-out", metadata: ["event": "\(large.event.id)"]) }
                    stopped = true
                case .unreadable(let from):
                    logger.error(
                        "skipping the rest of an event whose recipients cannot be read",
                        metadata: ["event": "\(large.event.id)", "from": "\(from)"])
                    stopped = true
                case .written(let count):
                    created += count
                }
                if !stopped, let part = pending.popFirst() {
                    group.addTask { try await self.fanOutPart(part, of: large, claiming: claiming) }
                }
            }
            return stopped ? nil : created
        }
    }

    /// One part of a large event in a transaction of its own; the one that ends the list
    /// marks the event done.
    func fanOutPart(_ part: Range<Int>, of large: LargeEvent, claiming: Bool) async throws -> PartOutcome {
        let event = large.event
        let tenant = event.tenantID
        let last = part.upperBound == large.recipientCount
        let outcome = try await withRoom(claiming) { room in
            try await queue.withTransaction { transaction -> (PartOutcome, claimed: [ClaimedDelivery]) in
                let held = try await transaction.holdEventPart(event.id, tenant: tenant, part: part)
                guard held.held else { return (.passed, []) }
                transaction.enterScope(of: tenant, recipients: part.count)
                guard let recipients = held.recipients else {
                    // Like an event that cannot be read at all: passed over and left in
                    // the outbox for inspection (trying again would never end).
                    let error = "recipients from position \(part.lowerBound) on cannot be read"
                    try await transaction.recordFanOutFailures([(tenant, event.id, error)], limit: 1)
                    return (.unreadable(from: part.lowerBound), [])
                }
                let payload = FanOut.Payload(snapshot: large.snapshot, recipients: recipients)
                let (profiles, chat) = try await transaction.recipients(
                    recipients, conversations: large.conversation.map { [$0] } ?? [], onlyThese: true, tenant: tenant)
                let templates = try await tenantTemplates(tenant, in: transaction)
                let drafts = try fanOut.drafts(for: event, payload, profiles: profiles, chat: chat, templates: templates, now: Date())
                let written = try await write(drafts, events: last ? [event.id] : [], tenant: tenant, room: room, in: transaction)
                // Last, so that parts written at once wait on each other only for this.
                if !last { try await transaction.leaseEvents([event.id], tenant: tenant) }
                return (.written(written.created), written.claimed)
            }
        }
        switch outcome {
        case .written(let count):
            state.withLock { $0.fannedOut(events: last ? 1 : 0, deliveries: count) }
            metrics.fannedOut(events: last ? 1 : 0, deliveries: count)
        case .unreadable:
            count(FailureCount(counted: 1, passedOver: 1))
        case .passed:
            break
        }
        return outcome
    }
}
