import Foundation
import HeraldCore
import HeraldPostgres
import HeraldTemplates

/// One fan-out transaction on the dispatcher's pool: the statements fan-out runs, typed, in
/// the order it runs them. Made by `DeliveryQueue.withTransaction`; valid only inside it.
public struct FanOutTransaction: Sendable {
    let connection: PostgresConnection
    let queue: DeliveryQueue

    /// Locks up to `limit` pending events (see `DeliveryQueue.claimEvents`).
    public func claimEvents(limit: Int, part: Int) async throws -> [ClaimedEvent] {
        try await queue.claimEvents(limit: limit, part: part, on: connection)
    }

    /// Works in `tenant`'s scope from the next statement on. For up to `genericPlanRecipients`
    /// recipients the statements run on plans made once per connection: planned for their
    /// values (the dispatcher's sessions default to that, for the queue's statements), the
    /// write of notifications and deliveries took 4 ms to plan and 1.2 ms to run, most of a
    /// fan-out at 200 events a second (latency p50 18 → 7 ms). A larger part keeps plans made
    /// for its values: with the generic plan, a 10,000-person group's parts of 1,000 were
    /// written in 4.8 s instead of 3.3 s. (Both ways: one transaction may fan out several
    /// tenants' events.)
    ///
    /// Sequential scans are off: every table a fan-out reads, it reads by key or by an index.
    /// Planned while the outbox and the activities were nearly empty by their statistics
    /// (autovacuum analyzes a table that grew at most once a minute), the generic plans read
    /// both whole, three times a fan-out: PostgreSQL's CPU grew from 37 % to 100 % of a core
    /// over 30 s at 200 events a second, and pickup's p99 from 5 to 25 ms (`herald bench
    /// latency`'s timeline, BENCHMARKS.md): the slow runs of that bench were these.
    public func enterScope(of tenant: UUID, recipients: Int) {
        connection.deferScript(
            Store.tenantScope(tenant) + "; SET LOCAL enable_seqscan = off; SET LOCAL plan_cache_mode = "
                + (recipients <= Self.genericPlanRecipients ? "force_generic_plan" : "force_custom_plan"))
    }

    public static let genericPlanRecipients = 200

    /// Leases large events to this worker, to fan out part by part.
    public func leaseEvents(_ events: [UUID], tenant: UUID) async throws {
        try await queue.leaseEvents(events, tenant: tenant, on: connection)
    }

    /// Whether this worker still holds a large event, and the recipients of `part`.
    public func holdEventPart(_ event: UUID, tenant: UUID, part: Range<Int>) async throws -> (held: Bool, recipients: [EventRecipient]?) {
        try await queue.holdEventPart(event, tenant: tenant, part: part, on: connection)
    }

    /// Counts failures against events; those at `limit` are passed over.
    /// - Returns: the events passed over.
    @discardableResult
    public func recordFanOutFailures(_ failures: [(tenant: UUID, event: UUID, error: String)], limit: Int) async throws -> [UUID] {
        try await queue.recordFanOutFailures(failures, limit: limit, on: connection)
    }

    /// What the per-recipient decision needs about each recipient (and of a P0's assignee and
    /// manager, whether they follow Live Activities), and for chat, each participant's state
    /// (muted, viewing, messages held back by quiet hours).
    public func recipients(
        _ recipients: [EventRecipient], liveActivityPeople: [EventRecipient] = [], conversations: [UUID], onlyThese: Bool, tenant: UUID
    ) async throws -> (profiles: [DeliveryQueue.Key: RecipientProfile], chat: [DeliveryQueue.ParticipantKey: ParticipantState]) {
        let profiles = try await DeliveryQueue.profiles(recipients, liveActivityPeople: liveActivityPeople, tenant: tenant, on: connection)
        var chat = try await DeliveryQueue.participantStates(
            conversations, people: onlyThese ? recipients.map(\.id) : nil, tenant: tenant, on: connection)
        try await DeliveryQueue.addDeferred(
            to: &chat, people: profiles.values.filter { $0.quietHours != nil }.map(\.id), tenant: tenant, on: connection)
        return (profiles, chat)
    }

    /// The tenant's template overrides, read in this transaction (in the tenant's scope:
    /// after `enterScope`).
    public func templateOverrides(tenant: UUID) async throws -> [TemplateKey: String] {
        try await TemplateOverrideRows.read(tenant: tenant, on: connection)
    }

    /// Writes drafts and marks `events` fanned out, leasing up to `room` of the new
    /// deliveries to this worker (not for `paused` providers); wakes the other workers when
    /// more were queued than it took. Drafts gathered into digests join theirs first
    /// (`DeliveryQueue.gather`), in this transaction.
    public func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, deadline: Duration, room: Int, paused: [PushProvider]
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        var drafts = drafts
        // (A digest that became full is closed by the next look for due digests, within a second.)
        if drafts.contains(where: { $0.digest != nil }) { try await DeliveryQueue.gather(&drafts, tenant: tenant, now: Date(), on: connection) }
        let claim = DeliveryQueue.FanOutClaim(worker: queue.worker, lease: queue.lease, room: room, paused: paused)
        let written = try await DeliveryQueue.write(
            drafts, events: events, tenant: tenant, deadline: deadline, claim: claim, freshness: queue.freshness,
            outboxFloor: queue.outboxFloor.value, on: connection)
        let more = written.created > written.claimed.count
        let banners = drafts.contains { $0.activityID != nil }
        if more || banners {
            // More than this worker takes at once: wake the others to share it. In-app banners
            // written: wake the live channel's sequencer.
            try await connection.query(
                """
                SELECT pg_notify(\(DeliveryQueue.deliveriesChannel), \(tenant.lowercasedString)) WHERE \(more)
                UNION ALL SELECT pg_notify(\(LiveFeed.pendingChannel), '') WHERE \(banners)
                """)
        }
        return written
    }

    /// Writes the Live Activity pushes of the events just written (`DeliveryQueue
    /// .writeLiveActivities`), queued for whichever worker claims them first, and tells the
    /// workers.
    /// - Returns: how many deliveries were queued.
    @discardableResult
    public func writeLiveActivities(_ drafts: [LiveActivityDraft], tenant: UUID, deadline: Duration) async throws -> Int {
        let queued = try await DeliveryQueue.writeLiveActivities(
            drafts, tenant: tenant, deadline: deadline, freshness: queue.freshness, on: connection)
        if queued > 0 {
            try await connection.query("SELECT pg_notify(\(DeliveryQueue.deliveriesChannel), \(tenant.lowercasedString))")
        }
        return queued
    }

    /// Runs `body` in a savepoint: if it throws, its work is rolled back and the error
    /// rethrown, and the transaction goes on.
    public func savepoint<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await connection.query("SAVEPOINT herald_fan_out_event")
        do {
            let result = try await body()
            try await connection.query("RELEASE SAVEPOINT herald_fan_out_event")
            return result
        } catch {
            try await connection.query("ROLLBACK TO SAVEPOINT herald_fan_out_event")
            try await connection.query("RELEASE SAVEPOINT herald_fan_out_event")
            throw error
        }
    }
}

extension DeliveryQueue {
    /// Runs `body` in one transaction on the dispatcher's pool, committed when it returns.
    public func withTransaction<Result: Sendable>(_ body: (FanOutTransaction) async throws -> Result) async throws -> Result {
        try await pool.withTransaction { connection in try await body(FanOutTransaction(connection: connection, queue: self)) }
    }
}
