import Foundation
import HeraldCore
import HeraldPostgres

/// The outbox and the delivery queue, in SQL. Every statement is one round trip; claims and
/// acknowledgements are set-based over whole batches.
///
/// Runs on a pool whose connections work as `herald_dispatcher` (which sees the queue
/// tables of every tenant); fan-out switches to the tenant's own scope.
public struct DeliveryQueue: Sendable {
    let pool: PostgresPool
    let worker: String
    let lease: Duration
    /// Only these tenants, or all when empty.
    let tenants: [UUID]
    /// When devices go stale (the store's): fan-out sends nothing to a stale one.
    let freshness: DeviceFreshness
    /// Where deliveries still to send lie (`refreshWindow()`).
    let window = LiveWindow()
    /// Where events still to fan out begin (`refreshWindow()`).
    let outboxFloor = QueueFloor()

    /// The queue as `worker` works it, on `store`'s pool (which must work as
    /// `herald_dispatcher`: `Store.withDispatcherPool`), leasing for `lease`, for `tenants`
    /// only (all when empty).
    public init(store: Store, worker: String, lease: Duration, tenants: [UUID]) {
        self.pool = store.pool
        self.worker = worker
        self.lease = lease
        self.tenants = tenants
        self.freshness = store.deviceFreshness
    }

    /// Where a worker that fanned out more deliveries than it can send at once tells the
    /// others (the payload is the tenant's id).
    public static let deliveriesChannel = "herald_deliveries"

    /// `herald_queue_depth`'s states.
    public enum State: String, CaseIterable, Sendable {
        case due, leased, deferred, timers
    }

    var leaseSeconds: Double { lease.timeInterval }

    // MARK: Deliveries

    /// Leases up to `limit` due deliveries, shared fairly between the tenants that have
    /// any: the batch is filled round robin across tenants, so one tenant's burst cannot
    /// hold back another's single notification by more than a batch. Providers this worker
    /// holds back (`paused`) are skipped; other workers may take their deliveries.
    public func claimDeliveries(limit: Int, paused: [PushProvider] = []) async throws -> [ClaimedDelivery] {
        let rows = try await pool.query(claim(limit: limit, paused: paused))
        let decoder = JSONDecoder()
        // A notification's deliveries share its data: each text is decoded once a batch.
        var decoded: [String: PushPayload] = [:]
        return try rows.map { row in
            // By position, in the order `claim` selects them (by name, each column was a hash
            // of its name, twenty a delivery).
            var column = 0
            func next<Value: PostgresDecodable>(_ type: Value.Type = Value.self) throws -> Value {
                defer { column += 1 }
                return try row.decode(type, at: column)
            }
            let (tenantID, id, notificationID, deviceID) = (try next(UUID.self), try next(UUID.self), try next(UUID.self), try next(UUID.self))
            let (provider, app, attempt) = (try next(String.self), try next(String.self), try next(Int.self))
            let (firstAttemptAt, deadlineAt, token, deviceActive) = (
                try next(Date.self), try next(Date.self), try next(String.self), try next(Bool.self)
            )
            let (title, body, dataText) = (try next(String.self), try next(String.self), try next(String.self))
            let (badge, sound, threadID, imageURL) = (try next(Int.self), try next(Bool.self), try next(String.self), try next(String?.self))
            let (eventAt, claimedAt, address) = (try next(Date.self), try next(Date.self), try next(String.self))
            let liveText = try next(String?.self)
            let (p256dh, auth, unanswered) = (try next(String?.self), try next(String?.self), try next(Int.self))
            let data: PushPayload
            if let known = decoded[dataText] {
                data = known
            } else {
                data = (try? decoder.decode(PushPayload.self, from: Data(dataText.utf8))) ?? PushPayload()
                decoded[dataText] = data
            }
            // A Live Activity's push (rare): what its ActivityKit request is made of (written by
            // this same type; one a later version wrote and this one cannot read is sent as an
            // alert to the app's plain topic, which APNs refuses for a Live Activity token).
            let live = liveText.flatMap { try? decoder.decode(LiveActivityContent.self, from: Data($0.utf8)) }
            let content = NotificationContent(
                title: title, body: body, data: data, badge: badge, sound: sound, threadID: threadID, imageURL: imageURL, liveActivity: live)
            return ClaimedDelivery(
                tenantID: tenantID, id: id, notificationID: notificationID, deviceID: deviceID,
                provider: PushProvider(rawValue: provider) ?? .fcm, app: AppKind(rawValue: app) ?? .member, attempt: attempt,
                firstAttemptAt: firstAttemptAt, deadlineAt: deadlineAt, token: token, address: DeviceAddress(rawValue: address) ?? .token,
                deviceActive: deviceActive, content: content.sent(as: notificationID), eventAt: eventAt, claimedAt: claimedAt,
                subscription: Self.subscription(endpoint: token, p256dh: p256dh, auth: auth), unansweredBefore: unanswered)
        }
    }

    /// The statement `claimDeliveries` runs (tests look at its plan). `claimDeliveries` reads
    /// its columns by position: their order is part of it.
    func claim(limit: Int, paused: [PushProvider] = []) -> PostgresQuery {
        let (lower, upper) = (window.lower, window.upper)
        return """
            WITH paused AS (
                SELECT unnest(\(paused.map(\.rawValue))::text[]) AS provider
            ), busy AS (
                -- One look per tenant into its due deliveries (a LIMIT, not EXISTS: as a
                -- semi-join over the partitions, the planner hashed the tenants against a scan
                -- of the whole partition, 50 ms a claim in a burn-down).
                SELECT t.id FROM tenants t
                CROSS JOIN LATERAL (
                    SELECT 1 FROM deliveries d
                    WHERE d.tenant_id = t.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND d.provider NOT IN (SELECT provider FROM paused)
                    LIMIT 1) due
                WHERE true\(tenantScope: "t.id", tenants)
            ), share AS (
                SELECT ceil(\(limit)::numeric / greatest(count(*), 1))::int AS n FROM busy
            ), first AS (
                -- An equal slice per busy tenant, locked (every row locked costs a write).
                SELECT c.tenant_id, c.id, c.row, c.due_at, row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.due_at) AS turn
                FROM busy b CROSS JOIN LATERAL (
                    SELECT d.tenant_id, d.id, d.ctid AS row, d.due_at FROM deliveries d
                    WHERE d.tenant_id = b.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND d.provider NOT IN (SELECT provider FROM paused)
                    ORDER BY d.due_at
                    LIMIT (SELECT n FROM share)
                    FOR NO KEY UPDATE SKIP LOCKED) c
            ), more AS (
                -- What tenants with less than a slice left unused goes to the others, in
                -- turns after their slices; nothing is read when the slices filled the batch.
                SELECT c.tenant_id, c.id, c.row, c.due_at, (SELECT n FROM share) + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.due_at) AS turn
                FROM busy b CROSS JOIN LATERAL (
                    SELECT d.tenant_id, d.id, d.ctid AS row, d.due_at FROM deliveries d
                    WHERE d.tenant_id = b.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND d.provider NOT IN (SELECT provider FROM paused)
                      AND NOT EXISTS (SELECT 1 FROM first f WHERE f.tenant_id = d.tenant_id AND f.id = d.id)
                    ORDER BY d.due_at
                    LIMIT (SELECT greatest(0, \(limit) - count(*)) FROM first)
                    FOR NO KEY UPDATE OF d SKIP LOCKED) c
            ), picked AS (
                -- Round robin: every tenant's first, then every tenant's second, …
                SELECT row, id FROM (SELECT * FROM first UNION ALL SELECT * FROM more) offered
                ORDER BY turn, due_at LIMIT \(limit)
            ), leased AS (
                UPDATE deliveries d
                SET status = 'sending', lease_owner = \(worker), lease_expires_at = now() + make_interval(secs => \(leaseSeconds)),
                    attempts = d.attempts + 1, first_attempt_at = coalesce(d.first_attempt_at, now()), updated_at = now()
                -- The rows locked above, by tuple id. Joined by key instead, the planner weighed
                -- the batch (estimated at a tenth of the queued rows it was offered, or at its
                -- limit) against the table, and on a small or freshly analyzed one hashed the
                -- batch and scanned every delivery: 200 ms a claim in a burn-down of 100,000.
                -- A locked row keeps its tuple id until this statement ends. (One updated and
                -- committed after this statement began is locked in its new version, which the
                -- update does not see: it stays queued for the next claim.)
                -- A tuple id is only unique within one partition (one week): the range of the
                -- picked ids leaves only their weeks' partitions to look in, and the ids tell
                -- which of the tuples there are the picked ones. Nothing else is joined here:
                -- with the notifications in the same statement, the planner scanned the week's
                -- notifications and looked each delivery up from them.
                WHERE d.ctid = ANY(ARRAY(SELECT row FROM picked))
                  AND d.id >= \(lower) AND d.id < \(upper)
                  AND d.id BETWEEN (SELECT id FROM picked ORDER BY id LIMIT 1) AND (SELECT id FROM picked ORDER BY id DESC LIMIT 1)
                  AND d.id = ANY(ARRAY(SELECT id FROM picked))
                RETURNING d.tenant_id, d.id, d.notification_id, d.device_id, d.provider, d.attempts, d.first_attempt_at, d.deadline_at,
                          d.unanswered
            )
            SELECT d.tenant_id, d.id, d.notification_id, d.device_id, d.provider, n.app, d.attempts, d.first_attempt_at, d.deadline_at,
                   v.token, (v.removed_at IS NULL AND v.deactivated_at IS NULL) AS device_active, n.title, n.body,
                   n.data::text AS data, n.badge, n.sound, n.thread_id, n.image_url, n.event_at, now() AS claimed_at, v.address,
                   n.live::text AS live, v.webpush_p256dh, v.webpush_auth, d.unanswered
            FROM leased d
            -- Each delivery's notification by its key, in a subquery the planner keeps apart
            -- (OFFSET 0). Joined directly, the lookup was planned with the tenant alone as its
            -- key (on the index of tenant and creation time) and the id as a filter: every
            -- delivery read its tenant's whole week of notifications, and a burn-down ran 14 %
            -- slower than before history was partitioned.
            -- (A delivery's id has its notification's time, so the same window holds both.)
            CROSS JOIN LATERAL (
                SELECT * FROM notifications n
                WHERE n.tenant_id = d.tenant_id AND n.id = d.notification_id AND n.id >= \(lower) AND n.id < \(upper)
                OFFSET 0) n
            JOIN devices v ON v.tenant_id = d.tenant_id AND v.id = d.device_id
            """
    }

    /// Records a batch of attempts. Only deliveries this worker still holds the lease on
    /// change state; every attempt is recorded, marked `counted` or not. A dead token
    /// deactivates its device whatever became of the lease.
    ///
    /// Writing the same batch again is harmless: an attempt keeps its id (`attemptID`), so an
    /// attempt already recorded is not recorded twice. With
    /// `again` (the batch was sent before and its answer lost, as when the connection died
    /// during the statement), a delivery whose attempt was recorded and counted then counts.
    /// - Returns: the ids of the deliveries whose acknowledgement counted.
    @discardableResult
    public func acknowledge(_ batch: [Acknowledgement], again: Bool = false) async throws -> Set<UUID> {
        guard !batch.isEmpty else { return [] }
        let rows = try await pool.query(acknowledgement(batch, again: again))
        return Set(try rows.map { try $0.decode(UUID.self, at: 0) })
    }

    /// The statement `acknowledge` runs (tests look at its plan).
    func acknowledgement(_ batch: [Acknowledgement], again: Bool = false) -> PostgresQuery {
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
        return """
            WITH input AS (
                SELECT *, \(worker)::text AS worker, (status = 'sent' AND attempt = 1 AND attempted) AS kept FROM unnest(
                    \(batch.map(\.tenantID))::uuid[], \(batch.map(\.deliveryID))::uuid[], \(batch.map(\.notificationID))::uuid[],
                    \(batch.map(\.deviceID))::uuid[],
                    \(batch.map(\.attempt))::int[], \(batch.map(\.status.rawValue))::text[], \(batch.map(\.outcome.rawValue))::text[],
                    \(batch.map(\.nextAttemptAt))::timestamptz[], \(batch.map(\.httpStatus))::int[], \(batch.map(\.messageID))::text[],
                    \(batch.map(\.error))::text[], \(batch.map(\.startedAt))::timestamptz[], \(batch.map(\.finishedAt))::timestamptz[],
                    \(batch.map(\.spent))::bool[], \(batch.map(\.attempted))::bool[],
                    \(batch.map { $0.attemptID ?? $0.deliveryID.v7Sibling() })::uuid[], \(batch.map(\.provider.rawValue))::text[])
                AS i(tenant_id, id, notification_id, device_id, attempt, status, outcome, next_at, http_status, message_id, error, started_at,
                     finished_at, spent, attempted, attempt_id, provider)
            ), acked AS (
                UPDATE deliveries d
                SET status = i.status, due_at = coalesce(i.next_at, d.due_at), lease_owner = NULL, lease_expires_at = NULL,
                    attempts = d.attempts - CASE WHEN i.spent THEN 0 ELSE 1 END,
                    first_attempt_at = CASE WHEN NOT i.spent AND d.attempts = 1 THEN NULL ELSE d.first_attempt_at END,
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
                -- Only a lease holder has a lease_owner (a CHECK ties it to status 'sending'),
                -- so status is not tested: that would bring in the partial index on leased
                -- rows. And the owner is compared with a column of the input, not with a
                -- constant: statistics taken while nobody held a lease (or naming other
                -- workers) make the planner expect at most one delivery to match a constant;
                -- it then scanned the table and, for every leased row, the whole batch again
                -- (measured: 1 s for 1,500 acknowledgements). As a join condition the owner
                -- leaves the table's estimate whole: each row is looked up by key, or a small
                -- table is hashed against the batch once.
                -- (A leased delivery is live: it lies within the window.)
                -- The attempt too: the lease this answer was sent under, not a later one. A
                -- worker that stalled past its lease and claimed the delivery again counted
                -- the first send's answer while the second was in flight, and the delivery
                -- reached the phone twice with one send counted (benchmarks/chaos's disk-full
                -- phase; BenchCLITests' burn-down on a loaded machine).
                WHERE d.tenant_id = i.tenant_id AND d.notification_id = i.notification_id AND d.id = i.id AND d.lease_owner = i.worker
                  AND d.attempts = i.attempt AND d.id >= \(lower) AND d.id < \(upper)
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

    /// How deep the queue is, across tenants: deliveries due now, being sent (leased), and
    /// queued for later (a retry's backoff, quiet hours), and pending timers.
    public func depth() async throws -> [State: Int] {
        let (due, leased, deferred, timers) = try await pool.query(
            """
            SELECT (SELECT count(*) FROM deliveries WHERE status = 'queued' AND due_at <= now() AND id >= \(window.lower) AND id < \(window.upper)),
                   (SELECT count(*) FROM deliveries WHERE status = 'sending' AND id >= \(window.lower) AND id < \(window.upper)),
                   (SELECT count(*) FROM deliveries WHERE status = 'queued' AND due_at > now() AND id >= \(window.lower) AND id < \(window.upper)),
                   (SELECT count(*) FROM activity_timers WHERE status = 'pending')
            """
        ).single().decode((Int, Int, Int, Int).self)
        return [.due: due, .leased: leased, .deferred: deferred, .timers: timers]
    }

    /// Deliveries queued or being sent plus events not fanned out.
    public func remaining() async throws -> Int {
        try await pool.query(
            """
            SELECT (SELECT count(*) FROM deliveries
                    WHERE status IN ('queued', 'sending') AND id >= \(window.lower) AND id < \(window.upper)\(tenantScope: "tenant_id", tenants))
                 + (SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL AND seq >= \(outboxFloor.value)\(tenantScope: "tenant_id", tenants))
            """
        ).single().decode(Int.self, at: 0)
    }

    /// Whether anything is left for a drain: events to fan out, deliveries due within
    /// `horizon`, or deliveries someone is sending.
    /// Deliveries of the providers in `paused` (this worker's configuration pauses) do not count.
    public func hasWork(within horizon: Duration, paused: [PushProvider] = []) async throws -> Bool {
        try await pool.query(
            """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE fanned_out_at IS NULL AND seq >= \(outboxFloor.value)\(tenantScope: "tenant_id", tenants))
                OR EXISTS (SELECT 1 FROM deliveries
                           WHERE id >= \(window.lower) AND id < \(window.upper) AND (status = 'sending'
                                  OR (status = 'queued' AND due_at <= now() + make_interval(secs => \(horizon.timeInterval))
                                      AND NOT provider = ANY(\(paused.map(\.rawValue))::text[])))\(tenantScope: "tenant_id", tenants))
            """
        ).single().decode(Bool.self, at: 0)
    }
}
