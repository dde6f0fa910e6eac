import Foundation
import HeraldCore
import HeraldPostgres

extension TenantSession {
    /// What an outbox event is about: an activity or a chat message.
    enum OutboxSubject {
        case activity(UUID)
        case message(UUID)
    }

    /// Appends an event to the outbox in this session's transaction and wakes the workers:
    /// the `NOTIFY` is delivered when the transaction commits, and not at all if it rolls back.
    /// The one way every workflow change tells the dispatcher about itself.
    func appendToOutbox<Payload: Codable & Sendable>(
        _ kind: EventKind, about subject: OutboxSubject, actor: UUID, recipients: [UUID], payload: Payload, at occurredAt: Date
    ) async throws {
        let (activityID, messageID): (UUID?, UUID?) = switch subject {
        case .activity(let id): (id, nil)
        case .message(let id): (nil, id)
        }
        // One round trip: the row, and the NOTIFY of it.
        try await connection.query(
            """
            WITH event AS (
                INSERT INTO outbox (tenant_id, id, kind, activity_id, message_id, actor_id, recipient_ids, payload, occurred_at)
                VALUES (\(tenantID), \(UUID.v7()), \(kind.rawValue), \(activityID), \(messageID), \(actor), \(recipients),
                        \(PostgresJSON(payload)), \(occurredAt))
            )
            SELECT pg_notify(\(Store.outboxChannel), \(tenantID.uuidString.lowercased()))
            """)
    }
}
