import Foundation
import HeraldCore
import HeraldLoops
import HeraldStore
import HeraldTemplates

/// Fan-out: events claimed from the outbox become notifications and deliveries, in the
/// tenant's scope, one transaction per batch (a large event part by part).
extension Dispatcher {
    func fanOutLoop() async {
        var oneByOne = false
        while !isStopping {
            do {
                let (events, _) = try await fanOutOnce(claiming: true, oneByOne: oneByOne)
                failures.fanOut.succeeded()
                oneByOne = false
                if events == 0 {
                    state.withLock { $0.outboxLooked(idle: true) }
                    await eventSignal.wait(timeout: jitteredPoll)
                    continue
                }
                let partial = events < configuration.eventBatch
                state.withLock { $0.outboxLooked(idle: partial) }
                if partial {
                    // That was all there was: look again when told (a hint that came in the
                    // meantime is waiting) or at the next poll.
                    await eventSignal.wait(timeout: jitteredPoll)
                }
            } catch {
                // An error the events' own rows may raise: the next batch is written event
                // by event, so that the one at fault is found and the others go through.
                oneByOne = FanOutFailure.mayBeTheEvents(error)
                let inARow = failures.fanOut.failed(error, metadata: ["event_by_event": "\(oneByOne)"])
                // Or sooner, when the listener is back (the database is, then: a failover's new
                // primary is used within a moment of its promotion), or at shutdown.
                await eventSignal.wait(timeout: RetryPause.after(failures: inARow))
            }
        }
    }

    /// Fans out one batch of pending events without sending anything (benchmarks, tools).
    /// - Returns: how many events it fanned out; 0 when none were left.
    public func fanOutPending() async throws -> Int {
        try await fanOutOnce().events
    }

    /// Claims one batch of events and fans it out, in one transaction; an event with more
    /// recipients than `fanOutPart` is leased in that transaction and fanned out part by part
    /// in transactions of its own.
    /// - Parameters:
    ///   - claiming: lease the new deliveries this worker has room for to itself and hand
    ///     them to the send loop (only while `run` is sending).
    ///   - oneByOne: write the small events one at a time, each in a savepoint, counting
    ///     the failures of those that fail on their own (`fanOutEventByEvent`).
    /// - Returns: how many events, and how many deliveries they created.
    func fanOutOnce(claiming: Bool = false, oneByOne: Bool = false) async throws -> (events: Int, queued: Int) {
        let batch = try await withRoom(claiming) { room in try await fanOutTransaction(room: room, oneByOne: oneByOne) }
        count(batch.failures)
        state.withLock { $0.fannedOut(events: batch.written, deliveries: batch.queued) }
        metrics.fannedOut(events: batch.written, deliveries: batch.queued)
        var total = batch.queued
        for event in batch.large {
            total += try await fanOutLarge(event, claiming: claiming)
        }
        return (batch.events, total)
    }

    /// Reserves room among the sends in flight (when `claiming`) for what `body` leases, and
    /// hands what it leased to the send loop.
    func withRoom<Result>(
        _ claiming: Bool, _ body: (Int) async throws -> (Result, claimed: [ClaimedDelivery])
    ) async throws -> Result {
        let reserved = claiming ? state.withLock { $0.reserveRoom() } : 0
        // The leases run from the transaction's start (its `now()`), which is after this.
        let began = ContinuousClock.now
        do {
            let (result, claimed) = try await body(reserved)
            state.withLock { $0.handedOff(claimed, reserved: reserved, leasedAt: began) }
            if reserved > 0 { sendSignal.signal() }
            return result
        } catch {
            state.withLock { $0.releaseRoom(reserved) }
            if reserved > 0 { sendSignal.signal() }
            throw error
        }
    }

    /// What one batch's transaction did.
    struct Batch {
        /// Events claimed: 0 when none were left.
        var events = 0
        /// Small events written (their notifications and deliveries made).
        var written = 0
        /// Deliveries they created.
        var queued = 0
        /// Events leased, to be fanned out part by part.
        var large: [LargeEvent] = []
        var failures = FailureCount()
    }

    /// Locks a batch of events and fans it out, each tenant's share in that tenant's scope,
    /// and commits once. Large events are only leased here.
    func fanOutTransaction(
        room: Int, oneByOne: Bool = false
    ) async throws -> (Batch, claimed: [ClaimedDelivery]) {
        try await queue.withTransaction { transaction in
            let events = try await transaction.claimEvents(limit: configuration.eventBatch, part: configuration.fanOutPart)
            guard !events.isEmpty else { return (Batch(), []) }
            var room = room
            var batch = Batch(events: events.count)
            var claimed: [ClaimedDelivery] = []
            var suspects = EventByEvent()
            let decoder = JSONDecoder()
            for (tenant, events) in Dictionary(grouping: events, by: \.tenantID) {
                var readable: [(ClaimedEvent, FanOut.Payload)] = []
                var recipients = 0
                var unreadable: [(tenant: UUID, event: UUID, error: String)] = []
                var leased: [UUID] = []
                for event in events {
                    do {
                        if let count = event.recipientCount, count > configuration.fanOutPart {
                            let snapshot = try FanOut.snapshot(of: event, decoder: decoder)
                            batch.large.append(
                                LargeEvent(event: event, snapshot: snapshot, recipientCount: count, conversation: snapshot.conversation))
                            leased.append(event.id)
                            continue
                        }
                        let payload = try FanOut.payload(of: event, decoder: decoder)
                        recipients += payload.recipients.count
                        readable.append((event, payload))
                    } catch {
                        // A snapshot this version cannot read would block the queue forever;
                        // it is passed over, loudly, and left in the outbox for inspection.
                        logger.error("skipping an event that cannot be fanned out", metadata: ["event": "\(event.id)", "error": "\(error)"])
                        unreadable.append((tenant, event.id, FanOutFailure.recorded(error)))
                    }
                }
                transaction.enterScope(of: tenant, recipients: recipients)
                if !leased.isEmpty { try await transaction.leaseEvents(leased, tenant: tenant) }
                if !unreadable.isEmpty {
                    try await transaction.recordFanOutFailures(unreadable, limit: 1)
                    batch.failures.add(counted: unreadable.count, passedOver: unreadable.count)
                }
                guard !readable.isEmpty else { continue }
                let before = suspects.written
                let written =
                    oneByOne
                    ? try await fanOutEventByEvent(readable, tenant: tenant, room: room, into: &suspects, in: transaction)
                    : try await fanOutTogether(readable, tenant: tenant, room: room, in: transaction)
                batch.written += oneByOne ? suspects.written - before : readable.count
                room -= written.claimed.count
                batch.queued += written.created
                claimed += written.claimed
            }
            batch.failures.add(try await countFailures(suspects, in: transaction))
            return (batch, claimed)
        }
    }

    /// Writes a tenant's share of a batch in one statement: the events' notifications and
    /// deliveries, the events marked fanned out.
    func fanOutTogether(
        _ readable: [(ClaimedEvent, FanOut.Payload)], tenant: UUID, room: Int, in transaction: FanOutTransaction
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        let recipients = readable.flatMap { $0.1.recipients }
        // The assignee and manager of a P0 activity too: its Live Activity is theirs.
        let liveActivityPeople = readable.flatMap { FanOut.liveActivityPeople($0.1) }
        let conversations = Set(readable.compactMap { $0.1.conversation })
        let recipientsFound = try await transaction.recipients(
            recipients, liveActivityPeople: liveActivityPeople, conversations: Array(conversations), onlyThese: false, tenant: tenant)
        let profiles = recipientsFound.profiles
        var chat = recipientsFound.chat
        let templates = try await tenantTemplates(tenant, in: transaction)
        let now = Date()
        var drafts: [NotificationDraft] = []
        for (event, payload) in readable {
            let made = try fanOut.drafts(for: event, payload, profiles: profiles, chat: chat, templates: templates, now: now)
            // A later message of the batch counts the ones quiet hours hold back before it.
            for draft in made where draft.decision == .quietHours {
                guard let conversation = draft.conversationID else { continue }
                chat[DeliveryQueue.ParticipantKey(conversation: conversation, person: draft.recipientID)]?.deferred += 1
            }
            drafts += made
        }
        FanOut.summarize(&drafts)
        var written = try await write(drafts, events: readable.map(\.0.id), tenant: tenant, room: room, in: transaction)
        let live = try readable.compactMap { try fanOut.liveActivityDraft(for: $0.0, $0.1, profiles: profiles, templates: templates) }
        if !live.isEmpty {
            written.created += try await transaction.writeLiveActivities(live, tenant: tenant, deadline: configuration.retry.deadline)
        }
        return written
    }

    /// The tenant's templates, their overrides read in `transaction` when not cached.
    func tenantTemplates(_ tenant: UUID, in transaction: FanOutTransaction) async throws -> TenantTemplates {
        try await fanOut.templates.templates(for: tenant) { try await transaction.templateOverrides(tenant: $0) }
    }

    /// Writes drafts (marking `events` done), leasing up to `room` of the new deliveries to
    /// this worker.
    func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, room: Int, in transaction: FanOutTransaction
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        var drafts = drafts
        // Email only from a worker that can send it (its start line says why not).
        if !gateway.sends(.email) {
            for index in drafts.indices { drafts[index].email = .never }
        }
        return try await transaction.write(
            drafts, events: events, tenant: tenant, deadline: configuration.retry.deadline, room: room,
            paused: state.withLock { $0.heldBack(at: .now) })
    }
}
