import Foundation
import HeraldCore
import HeraldPostgres
import HeraldStore

/// Fan-out: events claimed from the outbox become notifications and deliveries, in the
/// tenant's scope, one transaction per batch (a large event part by part).
extension Dispatcher {
    func fanOutLoop() async {
        var failures = 0
        while !isStopping {
            do {
                let (events, _) = try await fanOutOnce(claiming: true)
                failures = 0
                if events == 0 {
                    state.withLock { $0.fanOutIdle = true }
                    await eventSignal.wait(timeout: jitteredPoll)
                    continue
                }
                let partial = events < configuration.eventBatch
                state.withLock { $0.fanOutIdle = partial }
                if partial {
                    // That was all there was: look again when told (a hint that came in the
                    // meantime is waiting) or at the next poll.
                    await eventSignal.wait(timeout: jitteredPoll)
                }
            } catch {
                failures += 1
                logger.error("fan-out failed; retrying", metadata: ["error": "\(error)"])
                // Or sooner, when the listener is back (the database is, then: a failover's new
                // primary is used within a moment of its promotion), or at shutdown.
                await eventSignal.wait(timeout: LoopBackoff.after(failures: failures))
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
    /// - Parameter claiming: lease the new deliveries this worker has room for to itself and
    ///   hand them to the send loop (only while `run` is sending).
    /// - Returns: how many events, and how many deliveries they created.
    func fanOutOnce(claiming: Bool = false) async throws -> (events: Int, queued: Int) {
        let (events, queued, large) = try await withRoom(claiming) { room in try await fanOutTransaction(room: room) }
        state.withLock {
            $0.counters.eventsFannedOut += events - large.count
            $0.counters.deliveriesQueued += queued
        }
        metrics.fannedOut(events: events - large.count, deliveries: queued)
        var total = queued
        for event in large {
            total += try await fanOutLarge(event, claiming: claiming)
        }
        return (events, total)
    }

    /// Reserves room among the sends in flight (when `claiming`) for what `body` leases, and
    /// hands what it leased to the send loop.
    func withRoom<Result>(
        _ claiming: Bool, _ body: (Int) async throws -> (Result, claimed: [ClaimedDelivery])
    ) async throws -> Result {
        let reserved = claiming
            ? state.withLock { state -> Int in
                let room = max(0, min(configuration.claimBatch, configuration.concurrency - state.counters.inFlight))
                state.counters.inFlight += room
                return room
            } : 0
        do {
            let (result, claimed) = try await body(reserved)
            state.withLock {
                $0.counters.inFlight -= reserved - claimed.count
                $0.counters.deliveriesLeased += claimed.count
                $0.handOff += claimed
                for delivery in claimed { $0.held.insert(delivery.id) }
            }
            if reserved > 0 { sendSignal.signal() }
            return result
        } catch {
            state.withLock { $0.counters.inFlight -= reserved }
            if reserved > 0 { sendSignal.signal() }
            throw error
        }
    }

    /// The tenant's scope for fan-out's statements. For up to `genericPlanRecipients`
    /// recipients they run on plans made once per connection: planned for their values (the
    /// dispatcher's sessions default to that, for the queue's statements), the write of
    /// notifications and deliveries took 4 ms to plan and 1.2 ms to run, most of a fan-out
    /// at 200 events a second (latency p50 18 → 7 ms). A larger part keeps plans made for
    /// its values: with the generic plan, a 10,000-person group's parts of 1,000 were written
    /// in 4.8 s instead of 3.3 s.
    static func fanOutScope(_ tenant: UUID, recipients: Int) -> String {
        // (Both ways: one transaction may fan out several tenants' events.)
        Store.tenantScope(tenant) + "; SET LOCAL plan_cache_mode = "
            + (recipients <= genericPlanRecipients ? "force_generic_plan" : "force_custom_plan")
    }

    static let genericPlanRecipients = 200

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

    /// Locks a batch of events and fans it out, each tenant's share in that tenant's scope,
    /// and commits once. Large events are only leased here.
    func fanOutTransaction(room: Int) async throws -> ((events: Int, queued: Int, large: [LargeEvent]), claimed: [ClaimedDelivery]) {
        try await queue.pool.withTransaction { connection in
            let events = try await queue.claimEvents(limit: configuration.eventBatch, part: configuration.fanOutPart, on: connection)
            guard !events.isEmpty else { return ((0, 0, []), []) }
            var room = room
            var queued = 0
            var claimed: [ClaimedDelivery] = []
            var large: [LargeEvent] = []
            let decoder = JSONDecoder()
            for (tenant, events) in Dictionary(grouping: events, by: \.tenantID) {
                var readable: [(ClaimedEvent, FanOut.Payload)] = []
                var recipients: [EventRecipient] = []
                var conversations: Set<UUID> = []
                var done: [UUID] = []
                var leased: [UUID] = []
                for event in events {
                    do {
                        if let count = event.recipientCount, count > configuration.fanOutPart {
                            let snapshot = try FanOut.snapshot(of: event, decoder: decoder)
                            large.append(LargeEvent(event: event, snapshot: snapshot, recipientCount: count, conversation: snapshot.conversation))
                            leased.append(event.id)
                            continue
                        }
                        let payload = try FanOut.payload(of: event, decoder: decoder)
                        recipients += payload.recipients
                        if let conversation = payload.conversation { conversations.insert(conversation) }
                        readable.append((event, payload))
                    } catch {
                        // A snapshot this version cannot read would block the queue forever;
                        // it is marked done, loudly, and left in the outbox for inspection.
                        logger.error("skipping an event that cannot be fanned out", metadata: ["event": "\(event.id)", "error": "\(error)"])
                    }
                    done.append(event.id)
                }
                connection.deferScript(Self.fanOutScope(tenant, recipients: recipients.count))
                if !leased.isEmpty { try await queue.leaseEvents(leased, tenant: tenant, on: connection) }
                guard !done.isEmpty else { continue }
                let profiles = try await DeliveryQueue.profiles(recipients, tenant: tenant, on: connection)
                var chat = try await DeliveryQueue.participantStates(Array(conversations), tenant: tenant, on: connection)
                try await DeliveryQueue.addDeferred(
                    to: &chat, people: profiles.values.filter { $0.quietHours != nil }.map(\.id), tenant: tenant, on: connection)
                var drafts: [NotificationDraft] = []
                for (event, payload) in readable {
                    let made = try await fanOut.drafts(for: event, payload, profiles: profiles, chat: chat)
                    // A later message of the batch counts the ones quiet hours hold back before it.
                    for draft in made where draft.decision == .quietHours {
                        guard let conversation = draft.conversationID else { continue }
                        chat[DeliveryQueue.ParticipantKey(conversation: conversation, person: draft.recipientID)]?.deferred += 1
                    }
                    drafts += made
                }
                FanOut.summarize(&drafts)
                let written = try await write(drafts, events: done, tenant: tenant, room: room, on: connection)
                room -= written.claimed.count
                queued += written.created
                claimed += written.claimed
            }
            return ((events.count, queued, large), claimed)
        }
    }

    /// Writes drafts (marking `events` done), leasing up to `room` of the new deliveries to
    /// this worker; wakes the other workers when more were queued than it took.
    func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, room: Int, on connection: PostgresConnection
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        let paused = state.withLock { $0.gate.heldBack(at: .now) }
        let claim = DeliveryQueue.FanOutClaim(worker: configuration.worker, lease: configuration.lease, room: room, paused: paused)
        let written = try await DeliveryQueue.write(
            drafts, events: events, tenant: tenant, deadline: configuration.retry.deadline, claim: claim, on: connection)
        if written.created > written.claimed.count {
            // More than this worker takes at once: wake the others to share it.
            try await connection.query("SELECT pg_notify(\(Self.deliveriesChannel), \(tenant.uuidString.lowercased()))")
        }
        return written
    }

    /// Fans out a large event part by part (`fanOutParts`), a transaction each: the first
    /// part alone (its pushes go out while the rest is written), then the middle parts up to
    /// `fanOutConcurrency` at once, then the last, which marks the event done once every
    /// other part is committed. Each part first checks that this worker still holds the
    /// event, and renews the lease as it ends: if the lease lapsed and another worker took
    /// the event, that one carries on (a part written twice adds nothing: the write is
    /// idempotent). If a part fails, the worker's event leases are given back.
    /// - Returns: how many deliveries it created.
    func fanOutLarge(_ large: LargeEvent, claiming: Bool) async throws -> Int {
        let parts = configuration.fanOutParts(of: large.recipientCount)
        // The first alone, the middle ones at once, the last alone.
        let groups = parts.count < 2 ? [parts] : [[parts[0]], Array(parts.dropFirst().dropLast()), [parts[parts.count - 1]]]
        do {
            var created = 0
            for group in groups {
                guard let written = try await fanOutParts(group, of: large, claiming: claiming) else { return created }
                created += written
            }
            return created
        } catch {
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
        let event = large.event, tenant = event.tenantID
        let last = part.upperBound == large.recipientCount
        let outcome = try await withRoom(claiming) { room in
            try await queue.pool.withTransaction { connection -> (PartOutcome, claimed: [ClaimedDelivery]) in
                let held = try await queue.holdEventPart(event.id, tenant: tenant, part: part, on: connection)
                guard held.held else { return (.passed, []) }
                connection.deferScript(Self.fanOutScope(tenant, recipients: part.count))
                guard let recipients = held.recipients else {
                    // Like an event that cannot be read at all: marked done and left
                    // in the outbox for inspection (trying again would never end).
                    _ = try await write([], events: [event.id], tenant: tenant, room: 0, on: connection)
                    return (.unreadable(from: part.lowerBound), [])
                }
                let payload = FanOut.Payload(snapshot: large.snapshot, recipients: recipients)
                let profiles = try await DeliveryQueue.profiles(recipients, tenant: tenant, on: connection)
                var chat = try await DeliveryQueue.participantStates(
                    large.conversation.map { [$0] } ?? [], people: recipients.map(\.id), tenant: tenant, on: connection)
                try await DeliveryQueue.addDeferred(
                    to: &chat, people: profiles.values.filter { $0.quietHours != nil }.map(\.id), tenant: tenant, on: connection)
                let drafts = try await fanOut.drafts(for: event, payload, profiles: profiles, chat: chat)
                let written = try await write(drafts, events: last ? [event.id] : [], tenant: tenant, room: room, on: connection)
                // Last, so that parts written at once wait on each other only for this.
                if !last { try await queue.leaseEvents([event.id], tenant: tenant, on: connection) }
                return (.written(written.created), written.claimed)
            }
        }
        if case .written(let count) = outcome {
            state.withLock {
                $0.counters.deliveriesQueued += count
                if last { $0.counters.eventsFannedOut += 1 }
            }
            metrics.fannedOut(events: last ? 1 : 0, deliveries: count)
        }
        return outcome
    }
}
