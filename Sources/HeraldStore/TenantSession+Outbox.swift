import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// What an outbox event is about: an activity or a chat message.
    enum OutboxSubject {
        case activity(UUID)
        case message(UUID)
    }

    /// Appends an event to the outbox in this session's transaction and wakes the workers
    /// (sent ahead of the transaction's next statement, `PostgresConnection.enqueue`):
    /// the `NOTIFY` is delivered when the transaction commits, and not at all if it rolls back.
    /// The one way every workflow change tells the dispatcher about itself.
    /// - Parameter timers: changes to the activity's timers, written in the same statement.
    /// - Returns: the event's id.
    @discardableResult
    func appendToOutbox<Payload: Codable & Sendable>(
        _ kind: EventKind, about subject: OutboxSubject, actor: UUID, recipients: [UUID], payload: Payload, at occurredAt: Date,
        timers: TimerChanges? = nil
    ) async throws -> UUID {
        let (activityID, messageID): (UUID?, UUID?) =
            switch subject {
            case .activity(let id): (id, nil)
            case .message(let id): (nil, id)
            }
        // One statement: the row, the timers, and the NOTIFY of it; sent with the next one
        // (at the latest the COMMIT), whose call throws if it fails.
        // Sequential scans off for the rest of the transaction: the timers' foreign key is
        // checked by a plan the connection keeps, and one made while the activities were
        // nearly empty by their statistics read all of them at every assignment until
        // autovacuum analyzed the table (PostgreSQL's CPU 44 → 75 % of a core over 30 s at
        // 200 assignments a second, `herald bench latency`: BENCHMARKS.md).
        let id = UUID.v7()
        connection.deferScript("SET LOCAL enable_seqscan = off")
        connection.enqueue(
            """
            WITH event AS (
                INSERT INTO outbox (tenant_id, id, kind, activity_id, message_id, actor_id, recipient_ids, payload, occurred_at)
                VALUES (\(tenantID), \(id), \(kind.rawValue), \(activityID), \(messageID), \(actor), \(recipients),
                        \(Self.payloadText(payload).map(PostgresJSONText.init)), \(occurredAt))
            )\(timers: timers, tenant: tenantID)
            SELECT pg_notify(\(Store.outboxChannel), \(tenantID.lowercasedString))
            """)
        ledger.record(id)
        return id
    }

    /// An event's payload as JSON: by hand for the types that can (`JSONWritable`: the
    /// activity events every transition writes), else by `JSONEncoder`.
    static func payloadText(_ payload: some Codable & Sendable) -> String? {
        if let writable = payload as? any JSONWritable { return JSONWriter.text(of: writable) }
        return PostgresJSON(payload).postgresText
    }
}
