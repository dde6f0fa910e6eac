import Foundation
import HeraldPostgres

extension Store {
    /// Whether a tenant transaction whose `COMMIT` went unanswered committed, told by the
    /// first outbox event it wrote: run on a new connection (after a failover, on the new
    /// primary).
    ///
    /// It tries to insert an event with the same key and rolls back. An insert that meets a
    /// row of a transaction still in progress waits for that transaction to end (on the same
    /// server, if the old one is still committing); then the key is either taken (it
    /// committed) or free (it did not). On a promoted standby the old transaction is either
    /// there, replicated before the primary died, or lost with it.
    /// - Throws: `PostgresError` of kind `.commitUnknown` when the transaction wrote no
    ///   event (nothing tells), or the database's errors.
    static func committed(_ ledger: OutboxLedger, tenant tenantID: UUID, on connection: PostgresConnection) async throws -> Bool {
        guard let event = ledger.written.first else {
            throw PostgresError.commitUnknown()
        }
        try await connection.executeScript("BEGIN; \(tenantScope(tenantID)); SET LOCAL lock_timeout = '30s'")
        do {
            let free = try await connection.query(
                """
                INSERT INTO outbox (tenant_id, id, kind, actor_id, recipient_ids, payload, occurred_at)
                VALUES (\(tenantID), \(event), 'herald.commit_check', \(event), '{}', '{}', now())
                ON CONFLICT (tenant_id, id) DO NOTHING
                RETURNING id
                """)
            try await connection.query("ROLLBACK")
            return free.isEmpty
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }
}
