import Foundation
import HeraldCore
import HeraldPostgres

extension DeliveryQueue {
    /// Leases up to `limit` due deliveries, shared fairly between the tenants that have
    /// any: the batch is filled round robin across tenants, so one tenant's burst cannot
    /// hold back another's single notification by more than a batch. Providers this worker
    /// holds back (`paused`) are skipped; other workers may take their deliveries.
    ///
    /// The deliveries are not written: each tenant's share is one row of `delivery_leases`
    /// (docs/operating/scaling.md#a-delivery-written-twice). Claims of one tenant take turns
    /// (`claimTurns`), in one round trip with the claim.
    public func claimDeliveries(limit: Int, paused: [PushProvider] = []) async throws -> [ClaimedDelivery] {
        let rows = try await pool.withTransaction { connection in
            connection.enqueue(claimTurns(paused: paused))
            return try await connection.query(claim(limit: limit, paused: paused), followedBy: "COMMIT")
        }
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
            let lease = try next(UUID.self)
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
                subscription: Self.subscription(endpoint: token, p256dh: p256dh, auth: auth), unansweredBefore: unanswered, leaseID: lease)
        }
    }

    /// The advisory lock class of a tenant's claims ("DC"; the key is a hash of the tenant).
    static let claimLockClass: Int32 = 0x4443

    /// The statement before a claim, in its transaction: it takes the turn of each tenant with
    /// deliveries due that no other claim holds, and names them in `herald.claiming` for the
    /// claim. A tenant whose turn another claim holds is left to it this time, never waited
    /// for: a claimer frozen mid-claim (its process stopped while its results were on the
    /// way) would otherwise hold every other worker's send loop behind it.
    ///
    /// Why turns: a claim leaves the deliveries as they are and writes a lease, which a claim
    /// whose snapshot was taken before that lease committed cannot see; nothing it updates
    /// would make it look again, and it would take the same deliveries. The claim is the
    /// next statement, so its snapshot is taken once the turn is held, after the previous
    /// holder committed. (A turn lasts one claim, milliseconds; fan-out's own leases need
    /// none: no one else can see the deliveries it creates before its lease commits.)
    func claimTurns(paused: [PushProvider]) -> PostgresQuery {
        let (lower, upper) = (window.lower, window.upper)
        return """
            WITH busy AS MATERIALIZED (
                SELECT t.id FROM tenants t
                CROSS JOIN LATERAL (
                    SELECT 1 FROM deliveries d
                    WHERE d.tenant_id = t.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND NOT d.provider = ANY(\(paused.map(\.rawValue))::text[])
                    LIMIT 1) due
                WHERE true\(tenantScope: "t.id", tenants)
            ), turns AS MATERIALIZED (
                SELECT b.id FROM busy b WHERE pg_try_advisory_xact_lock(\(Self.claimLockClass)::int, hashtext(b.id::text))
            )
            SELECT set_config('herald.claiming', coalesce(string_agg(id::text, ','), ''), true) FROM turns
            """
    }

    /// What a claim reads of each delivery it takes (it writes none).
    static let claimedColumns = """
        d.tenant_id, d.id, d.notification_id, d.device_id, d.provider, d.attempts, d.first_attempt_at, d.deadline_at, d.unanswered, d.due_at
        """

    /// The statement `claimDeliveries` runs (tests look at its plan), after `claimTurns` in
    /// the same transaction. `claimDeliveries` reads its columns by position: their order is
    /// part of it.
    func claim(limit: Int, paused: [PushProvider] = []) -> PostgresQuery {
        let (lower, upper) = (window.lower, window.upper)
        return """
            WITH paused AS (
                SELECT unnest(\(paused.map(\.rawValue))::text[]) AS provider
            ), busy AS (
                -- The tenants whose turn this claim holds (`claimTurns`).
                SELECT unnest(string_to_array(nullif(current_setting('herald.claiming', true), ''), ','))::uuid AS id
            ), leased AS MATERIALIZED (
                -- What their leases hold: passed over below as a hashed list, built once.
                SELECT m.id FROM delivery_leases l CROSS JOIN LATERAL unnest(l.deliveries) m(id)
                WHERE l.tenant_id IN (SELECT id FROM busy)
            ), share AS (
                SELECT ceil(\(limit)::numeric / greatest(count(*), 1))::int AS n FROM busy
            ), first AS (
                -- An equal slice per tenant (a LIMIT per tenant: as a semi-join over the
                -- partitions, the planner hashed the tenants against a scan of the whole
                -- partition).
                SELECT c.*, row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.due_at) AS turn
                FROM busy b CROSS JOIN LATERAL (
                    SELECT \(unsafeRaw: Self.claimedColumns) FROM deliveries d
                    WHERE d.tenant_id = b.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND d.provider NOT IN (SELECT provider FROM paused) AND d.id NOT IN (SELECT id FROM leased)
                    ORDER BY d.due_at
                    LIMIT (SELECT n FROM share)) c
            ), more AS (
                -- What tenants with less than a slice left unused goes to the others, in
                -- turns after their slices; nothing is read when the slices filled the batch.
                SELECT c.*, (SELECT n FROM share) + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.due_at) AS turn
                FROM busy b CROSS JOIN LATERAL (
                    SELECT \(unsafeRaw: Self.claimedColumns) FROM deliveries d
                    WHERE d.tenant_id = b.id AND d.status = 'queued' AND d.due_at <= now()
                      AND d.id >= \(lower) AND d.id < \(upper)
                      AND d.provider NOT IN (SELECT provider FROM paused) AND d.id NOT IN (SELECT id FROM leased)
                      AND NOT EXISTS (SELECT 1 FROM first f WHERE f.tenant_id = d.tenant_id AND f.id = d.id)
                    ORDER BY d.due_at
                    LIMIT (SELECT greatest(0, \(limit) - count(*)) FROM first)) c
            ), picked AS MATERIALIZED (
                -- Round robin: every tenant's first, then every tenant's second, …
                SELECT * FROM (SELECT * FROM first UNION ALL SELECT * FROM more) offered
                ORDER BY turn, due_at LIMIT \(limit)
            ), lease AS (
                -- One lease a tenant; the deliveries are not written.
                INSERT INTO delivery_leases (tenant_id, id, worker, expires_at, deliveries, notifications, attempts)
                SELECT p.tenant_id, gen_random_uuid(), \(worker), now() + make_interval(secs => \(leaseSeconds)),
                       array_agg(p.id), array_agg(p.notification_id), array_agg(p.attempts)
                FROM picked p GROUP BY p.tenant_id
                RETURNING tenant_id, id
            )
            SELECT d.tenant_id, d.id, d.notification_id, d.device_id, d.provider, n.app, d.attempts + 1,
                   coalesce(d.first_attempt_at, now()), d.deadline_at,
                   v.token, (v.removed_at IS NULL AND v.deactivated_at IS NULL) AS device_active, n.title, n.body,
                   n.data::text AS data, n.badge, n.sound, n.thread_id, n.image_url, n.event_at, now() AS claimed_at, v.address,
                   n.live::text AS live, v.webpush_p256dh, v.webpush_auth, d.unanswered, l.id
            FROM picked d
            JOIN lease l ON l.tenant_id = d.tenant_id
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
            -- Its device by its key too: joined, a batch estimated at a couple of rows (the
            -- leases' estimate) hashed the tenant's every device, 20 ms a claim in a burn-down.
            CROSS JOIN LATERAL (SELECT * FROM devices v WHERE v.tenant_id = d.tenant_id AND v.id = d.device_id OFFSET 0) v
            """
    }
}
