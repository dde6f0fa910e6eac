import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Records a batch of attempts. Only deliveries this worker still holds the lease on
    /// change state; every attempt is recorded, marked `counted` or not. A dead token
    /// deactivates its device whatever became of the lease. The leases in `finishing` (those
    /// whose last deliveries this batch settles) are removed with it.
    ///
    /// Writing the same batch again is harmless: an attempt keeps its id (`attemptID`), so an
    /// attempt already recorded is not recorded twice. With
    /// `again` (the batch was sent before and its answer lost, as when the connection died
    /// during the statement), a delivery whose attempt was recorded and counted then counts.
    /// - Returns: the ids of the deliveries whose acknowledgement counted.
    @discardableResult
    public func acknowledge(_ batch: [Acknowledgement], finishing: [DeliveryLease] = [], again: Bool = false) async throws -> Set<UUID> {
        guard !batch.isEmpty || !finishing.isEmpty else { return [] }
        let statement = acknowledgement(batch, finishing: finishing, again: again)
        // Planned once per connection, not at every batch: its plan is the same for any
        // batch (each row by its key; the weeks of history pruned as it starts), and planned
        // for its values it took 2 ms a batch, as long as running it (a burn-down, measured
        // with pg_stat_statements). The dispatcher's connections otherwise plan for the values
        // (the claim's plan depends on them), hence a transaction of its own for the setting,
        // in the same round trip. (Not `withTransaction`: a write whose answer was lost is
        // written again by the worker, `again`, not run again here.)
        let rows = try await pool.withConnection { connection in
            connection.deferScript("BEGIN; SET LOCAL plan_cache_mode = force_generic_plan")
            do {
                return try await connection.query(statement, followedBy: "COMMIT")
            } catch {
                try? await connection.executeScript("ROLLBACK")
                throw error
            }
        }
        return Set(try rows.map { try $0.decode(UUID.self, at: 0) })
    }

    /// The statement `acknowledge` runs (tests look at its plan).
    func acknowledgement(_ batch: [Acknowledgement], finishing: [DeliveryLease] = [], again: Bool = false) -> PostgresQuery {
        let (lower, upper) = (window.lower, window.upper)
        // (Read only when a batch is sent again: rare, so its plan need not be pruned.) What
        // the earlier write counted: an attempt row, or a first attempt kept on its delivery.
        // (Every part of the statement sees the rows as they were before it.)
        let earlier =
            again
            ? """
            UNION
            SELECT a.delivery_id FROM delivery_attempts a
            JOIN input i ON a.tenant_id = i.tenant_id AND a.delivery_id = i.id AND a.id = i.attempt_id
            WHERE a.counted
            UNION
            SELECT d.id FROM deliveries d
            JOIN input i ON d.tenant_id = i.tenant_id AND d.notification_id = i.notification_id AND d.id = i.id
                         AND d.sent_attempt_id = i.attempt_id
            WHERE d.id >= '\(lower.uuidString)' AND d.id < '\(upper.uuidString)'
            """
            : ""
        // Written again, an attempt the earlier write kept on its delivery is not also written
        // as a row. (A batch is written again only with `again`: otherwise each attempt is
        // written once, and this lookup is left out.)
        let keptBefore =
            again
            ? """
             AND NOT EXISTS (
                SELECT 1 FROM deliveries d
                WHERE d.tenant_id = i.tenant_id AND d.notification_id = i.notification_id AND d.id = i.id
                  AND d.sent_attempt_id = i.attempt_id AND d.id >= '\(lower.uuidString)' AND d.id < '\(upper.uuidString)')
            """
            : ""
        // Written again, a delivery whose attempt the earlier write recorded is not settled
        // again (an unanswered send would be counted twice).
        let recordedBefore =
            again
            ? """
             AND NOT EXISTS (
                SELECT 1 FROM delivery_attempts a WHERE a.tenant_id = i.tenant_id AND a.delivery_id = i.id AND a.id = i.attempt_id)
            """
            : ""
        return """
            WITH input AS (
                SELECT *, \(worker)::text AS worker, (status = 'sent' AND attempt = 1 AND attempted) AS kept FROM unnest(
                    \(batch.map(\.tenantID))::uuid[], \(batch.map(\.deliveryID))::uuid[], \(batch.map(\.notificationID))::uuid[],
                    \(batch.map(\.deviceID))::uuid[],
                    \(batch.map(\.attempt))::int[], \(batch.map(\.status.rawValue))::text[], \(batch.map(\.outcome.rawValue))::text[],
                    \(batch.map(\.nextAttemptAt))::timestamptz[], \(batch.map(\.httpStatus))::int[], \(batch.map(\.messageID))::text[],
                    \(batch.map(\.error))::text[], \(batch.map(\.startedAt))::timestamptz[], \(batch.map(\.finishedAt))::timestamptz[],
                    \(batch.map(\.spent))::bool[], \(batch.map(\.attempted))::bool[],
                    \(batch.map { $0.attemptID ?? $0.deliveryID.v7Sibling() })::uuid[], \(batch.map(\.provider.rawValue))::text[],
                    \(batch.map(\.leaseID))::uuid[])
                AS i(tenant_id, id, notification_id, device_id, attempt, status, outcome, next_at, http_status, message_id, error, started_at,
                     finished_at, spent, attempted, attempt_id, provider, lease_id)
            ), acked AS (
                UPDATE deliveries d
                SET status = i.status, due_at = coalesce(i.next_at, d.due_at),
                    attempts = d.attempts + CASE WHEN i.spent THEN 1 ELSE 0 END,
                    first_attempt_at = CASE WHEN i.spent THEN coalesce(d.first_attempt_at, i.started_at) ELSE d.first_attempt_at END,
                    http_status = coalesce(i.http_status, d.http_status), message_id = coalesce(i.message_id, d.message_id),
                    last_error = i.error, sent_at = CASE WHEN i.status = 'sent' THEN i.finished_at ELSE d.sent_at END,
                    unanswered = d.unanswered + CASE WHEN i.outcome = 'unanswered' THEN 1 ELSE 0 END,
                    -- A first attempt that sent it is kept here, not as a row of its own
                    -- (delivery_attempt_history reads it as one).
                    sent_by = CASE WHEN i.kept THEN i.worker ELSE d.sent_by END,
                    sent_attempt_id = CASE WHEN i.kept THEN i.attempt_id ELSE d.sent_attempt_id END,
                    sent_attempt_started_at = CASE WHEN i.kept THEN i.started_at ELSE d.sent_attempt_started_at END,
                    updated_at = now()
                FROM input i
                -- Under the lease it was claimed with, still this worker's (a lease that ran
                -- out and was swept is gone; `reclaimExpiredLeases`), and at the attempt it
                -- was claimed at: a worker that stalled past its lease and claimed the
                -- delivery again must not count the first send's answer while the second is
                -- in flight (benchmarks/chaos's disk-full phase). The delivery's status is not
                -- tested (it is `queued` while leased): that would bring in the partial index
                -- of queued rows, where each row is found by its key. The owner is compared
                -- with a column of the input, not a constant, which statistics taken while
                -- nobody held a lease made the planner expect to match nothing.
                -- (A leased delivery is live: it lies within the window.)
                WHERE d.tenant_id = i.tenant_id AND d.notification_id = i.notification_id AND d.id = i.id
                  AND d.attempts = i.attempt - 1 AND d.id >= \(lower) AND d.id < \(upper)
                  AND EXISTS (SELECT 1 FROM delivery_leases l
                              WHERE l.tenant_id = i.tenant_id AND l.id = i.lease_id AND l.worker = i.worker AND d.id = ANY (l.deliveries))\(unsafeRaw: recordedBefore)
                -- (What the webhooks are told of comes from here, not from the batch again.)
                RETURNING d.tenant_id, d.id, i.notification_id, i.device_id, i.status, i.attempt, i.http_status, i.error
            ), recorded AS (
                INSERT INTO delivery_attempts (tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome,
                                               http_status, provider_error, message_id, next_attempt_at, counted)
                -- In the delivery's time, so that it is kept (and dropped) with it; the same
                -- attempt written twice (a batch sent again) is one row. Not for a first
                -- attempt that sent it and counted: that one is kept on the delivery.
                SELECT i.tenant_id, i.attempt_id, i.id, i.attempt, i.worker, i.started_at, i.finished_at, i.outcome, i.http_status,
                       i.error, i.message_id, CASE WHEN i.status = 'queued' THEN i.next_at END,
                       EXISTS (SELECT 1 FROM acked a WHERE a.tenant_id = i.tenant_id AND a.id = i.id)
                FROM input i
                WHERE i.attempted AND NOT (i.kept AND EXISTS (SELECT 1 FROM acked a WHERE a.tenant_id = i.tenant_id AND a.id = i.id))\(unsafeRaw: keptBefore)
                ON CONFLICT (tenant_id, delivery_id, id) DO NOTHING
            ), dead AS (
                -- A dead token; or an address the relay refused permanently a third time in a
                -- row (docs/notifications.md#email): its count of refusals starts again when
                -- an email to it goes through.
                UPDATE devices v
                SET refusals = CASE WHEN i.outcome = 'bad_request' THEN v.refusals + 1 ELSE 0 END,
                    deactivated_at = CASE WHEN i.outcome = 'dead_token' OR v.refusals >= \(Self.emailRefusalsToDeactivate - 1) AND i.outcome = 'bad_request'
                                          THEN i.finished_at END,
                    deactivation_reason = CASE WHEN i.outcome = 'dead_token' THEN i.error
                                               WHEN v.refusals >= \(Self.emailRefusalsToDeactivate - 1) AND i.outcome = 'bad_request'
                                               THEN 'the relay refused this address \(unsafeRaw: "\(Self.emailRefusalsToDeactivate)") times in a row: ' || i.error END,
                    updated_at = now()
                FROM input i
                -- (The first condition is the input's alone: a push that went through looks up no device.)
                WHERE (i.outcome = 'dead_token' OR i.provider = 'email' AND i.outcome IN ('bad_request', 'delivered'))
                  AND v.tenant_id = i.tenant_id AND v.id = i.device_id AND v.deactivated_at IS NULL
                  AND (i.outcome <> 'delivered' OR v.refusals > 0)
                RETURNING v.tenant_id, v.id, v.person_id, v.app, v.platform, v.provider, v.deactivation_reason, v.deactivated_at IS NOT NULL AS deactivated
            ), finished AS (
                -- The leases whose last deliveries this batch settles.
                DELETE FROM delivery_leases l
                USING unnest(\(finishing.map(\.tenantID))::uuid[], \(finishing.map(\.id))::uuid[]) AS f(tenant_id, id)
                WHERE l.tenant_id = f.tenant_id AND l.id = f.id AND l.worker = \(worker)
            ), told AS (
                -- What became of each notification, and each dead token, for tenants with a
                -- webhook endpoint (docs/webhooks.md): rows of the durable feed no socket sees.
                INSERT INTO live_pending (tenant_id, kind, payload)
                SELECT a.tenant_id, 'outcome', jsonb_build_object(
                    'type', CASE WHEN a.status = 'sent' THEN 'notification.sent' ELSE 'notification.failed' END,
                    'data', jsonb_build_object('notificationId', a.notification_id, 'deliveryId', a.id, 'deviceId', a.device_id,
                                               'status', a.status, 'attempt', a.attempt, 'httpStatus', a.http_status, 'error', a.error))
                FROM acked a
                WHERE a.status IN ('sent', 'failed', 'dead_token', 'expired')
                  AND EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = a.tenant_id)
                UNION ALL
                SELECT d.tenant_id, 'device', jsonb_build_object(
                    'type', 'device.deactivated',
                    'data', jsonb_build_object('deviceId', d.id, 'personId', d.person_id, 'app', d.app, 'platform', d.platform,
                                               'provider', d.provider, 'reason', d.deactivation_reason))
                FROM dead d WHERE d.deactivated AND EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = d.tenant_id)
            )
            SELECT id FROM acked
            \(unsafeRaw: earlier)
            """
    }

    /// Permanent refusals of an address in a row that deactivate it.
    static let emailRefusalsToDeactivate = 3
}
