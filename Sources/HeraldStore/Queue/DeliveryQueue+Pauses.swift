import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Records that this worker holds `provider` back until `until`, and why (for `herald
    /// stats`). The row is a record for operators: other workers do not read it.
    public func pause(_ provider: PushProvider, reason: String, for duration: Duration) async throws {
        try await pool.query(
            """
            INSERT INTO provider_pauses (provider, reason, worker, paused_at, until)
            VALUES (\(provider.rawValue), \(reason), \(worker), now(), now() + make_interval(secs => \(duration.timeInterval)))
            ON CONFLICT (provider, worker) DO UPDATE SET reason = excluded.reason, until = excluded.until,
                paused_at = CASE WHEN provider_pauses.until > now() THEN provider_pauses.paused_at ELSE excluded.paused_at END
            """)
    }

    /// This worker sends to `provider` again.
    public func resume(_ provider: PushProvider) async throws {
        try await pool.query("DELETE FROM provider_pauses WHERE provider = \(provider.rawValue) AND worker = \(worker)")
    }
}
