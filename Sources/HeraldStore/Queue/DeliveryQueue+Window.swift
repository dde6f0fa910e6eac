import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Reads again where deliveries still to send and events still to fan out begin (every
    /// second, and at start): the live window, and the outbox's floor (`QueueFloor`).
    public func refreshWindow() async throws {
        let now = ContinuousClock.now
        let (from, mark) = outboxFloor.nextLook(at: now)
        let row = try await pool.withConnection { connection in
            // The highest seq handed out, read before the statement whose snapshot is noted:
            // every event up to it is then committed before that snapshot or in progress in
            // it. (From the sequence: max(seq) would read the whole outbox, history included.)
            let highest = try await connection.query("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM outbox_seq_seq").single().decode(
                Int64.self, at: 0)
            let row = try await connection.query(
                """
                SELECT herald_live_floor(\(from)),
                       (SELECT seq FROM outbox WHERE fanned_out_at IS NULL AND seq >= \(from) ORDER BY seq LIMIT 1),
                       pg_current_snapshot()::text,
                       coalesce((SELECT bool_and(pg_xact_status(x) IS DISTINCT FROM 'in progress')
                                 FROM pg_snapshot_xip(\(mark?.snapshot ?? "1:1:")::pg_snapshot) x), true)
                """
            ).single()
            return (row, highest)
        }
        window.update(try row.0.decode(UUID.self, at: 0))
        let settled = try row.0.decode(Bool.self, at: 3)
        outboxFloor.update(
            looked: from, lowestPending: try row.0.decode(Int64?.self, at: 1),
            mark: QueueFloor.Mark(snapshot: try row.0.decode(String.self, at: 2), highest: row.1),
            askedMarkSettled: mark != nil && settled, at: now)
    }
}
