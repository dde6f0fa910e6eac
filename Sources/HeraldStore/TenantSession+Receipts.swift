import Foundation
import HeraldCore
import HeraldPostgres

/// The payload of a `conversation` frame: which one changed (its object is read for each reader).
struct ConversationChanged: Sendable, Codable {
    let conversation: UUID
}

extension TenantSession {
    /// Moves a participant's receipts forward (never back, never past the newest message) and,
    /// when they moved, writes the `receipt` frame the other participants get. Reading implies
    /// receiving.
    /// - Parameters:
    ///   - read: read up to this sequence; `readAll`: up to the newest message.
    ///   - received: received up to this sequence.
    func receipt(of person: Person, in conversation: UUID, read: Int64?, received: Int64?, readAll: Bool) async throws {
        let rows = try await connection.query(
            """
            WITH newest AS (
                SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE tenant_id = \(tenantID) AND conversation_id = \(conversation)
            ), wanted AS (
                SELECT CASE WHEN \(readAll) THEN n.seq ELSE least(coalesce(\(read)::bigint, 0), n.seq) END AS read,
                       least(coalesce(\(received)::bigint, 0), n.seq) AS received
                FROM newest n
            )
            UPDATE conversation_participants cp
            SET last_read_seq = greatest(cp.last_read_seq, w.read),
                last_received_seq = greatest(cp.last_received_seq, w.read, w.received)
            FROM wanted w
            WHERE cp.tenant_id = \(tenantID) AND cp.conversation_id = \(conversation) AND cp.person_id = \(person.id)
              AND (cp.last_read_seq < w.read OR cp.last_received_seq < greatest(w.read, w.received))
            RETURNING cp.last_received_seq, cp.last_read_seq
            """)
        guard let row = rows.first else { return }
        let (receivedNow, readNow) = try row.decode((Int64, Int64).self)
        try await appendLive(
            .receipt, .conversation(conversation, excluding: person.id),
            payload: LiveReceipt(person: person.email, received: receivedNow, read: readNow))
    }

    /// What the live channel wrote to people's sockets: each message counts as received by
    /// them. One statement for all of them. The `receipt` frame of each receipt that moved goes
    /// to the senders of the messages it newly covers, not to every participant: a message
    /// to a group of n is received n times, and telling all n each time is n² frames.
    /// - Parameter received: per person and conversation, the highest sequence written.
    ///
    /// The statement goes with the transaction's next call (`PostgresConnection.enqueue`): for
    /// the live server's rounds, its `COMMIT`, in one round trip with the transaction's begin.
    public func markReceived(_ received: [(person: UUID, conversation: UUID, sequence: Int64)]) {
        guard !received.isEmpty else { return }
        // Its plan depends on no value (the arrays' lengths aside: each row is found by key),
        // so it is made once a connection: PostgreSQL's own choice planned it at every run,
        // 1.5 ms of planning for 1.2 of work in a one-to-one chat at 200 messages a second.
        connection.deferScript(Store.plannedOnceOnIndexes)
        connection.enqueue(
            """
            WITH written AS (
                SELECT person, conversation, max(seq) AS seq
                FROM unnest(\(received.map(\.person))::uuid[], \(received.map(\.conversation))::uuid[],
                            \(received.map(\.sequence))::bigint[]) AS x(person, conversation, seq)
                GROUP BY person, conversation
            ), before AS (
                -- Locked, so what it read is what the update moves from; what was read does not
                -- change here, so the receipts are written from these rows alone (joining the
                -- update's rows, which PostgreSQL counts as one, looped a million times for a
                -- 1,000-person group).
                SELECT cp.conversation_id, cp.person_id, cp.last_received_seq AS was, cp.last_read_seq AS read, x.seq
                FROM conversation_participants cp JOIN written x ON x.conversation = cp.conversation_id AND x.person = cp.person_id
                WHERE cp.tenant_id = \(tenantID) AND cp.left_at IS NULL AND cp.last_received_seq < x.seq
                FOR UPDATE OF cp
            ), moved AS (
                UPDATE conversation_participants cp SET last_received_seq = b.seq
                FROM before b
                WHERE cp.tenant_id = \(tenantID) AND cp.conversation_id = b.conversation_id AND cp.person_id = b.person_id
            ), told AS (
                SELECT DISTINCT b.conversation_id, b.person_id, b.seq, b.read, m.sender_id
                FROM before b JOIN messages m ON m.tenant_id = \(tenantID) AND m.conversation_id = b.conversation_id
                                              AND m.seq > b.was AND m.seq <= b.seq AND NOT m.is_system AND m.sender_id <> b.person_id
            ), pending AS (
                -- One row a sender and conversation, however many receipts: a group's message
                -- written to 1,000 sockets is one row for the sequencer, not 1,000 (each
                -- receipt still its own frame and position: `LivePayload.deliveryReceipts`).
                INSERT INTO live_pending (tenant_id, kind, person_id, conversation_id, payload)
                SELECT \(tenantID), 'receipt', t.sender_id, t.conversation_id,
                       jsonb_build_object('receipts', jsonb_agg(
                           jsonb_build_object('person', p.email, 'received', t.seq, 'read', t.read) ORDER BY p.email))
                FROM told t JOIN people p ON p.tenant_id = \(tenantID) AND p.id = t.person_id
                GROUP BY t.sender_id, t.conversation_id
                RETURNING 1
            )
            SELECT pg_notify(\(LiveFeed.pendingChannel), '') WHERE EXISTS (SELECT FROM pending)
            """)
    }
}
