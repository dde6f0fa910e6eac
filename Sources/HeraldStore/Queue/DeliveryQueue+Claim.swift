import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
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
}
