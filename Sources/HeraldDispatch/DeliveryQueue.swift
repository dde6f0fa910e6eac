import Foundation
import HeraldCore
import HeraldPostgres

/// An outbox event a worker has locked for its fan-out transaction.
struct ClaimedEvent: Sendable {
    let tenantID: UUID
    let id: UUID
    let kind: String
    /// The event's snapshot, as JSON text.
    let payload: String
    let occurredAt: Date
}

/// A delivery a worker holds the lease on, with everything needed to send it.
struct ClaimedDelivery: Sendable {
    let tenantID: UUID
    let id: UUID
    let deviceID: UUID
    let provider: PushProvider
    let app: AppKind
    /// Attempts including this one.
    let attempt: Int
    let firstAttemptAt: Date
    let deadlineAt: Date
    let token: String
    let deviceActive: Bool
    let title: String
    let body: String
    let data: [String: String]
    let badge: Int
    let sound: Bool
    let threadID: String
    let imageURL: String?
    let eventAt: Date
    /// The database's clock at the claim.
    let claimedAt: Date
}

/// What became of one attempt, as the worker acknowledges it.
struct Acknowledgement: Sendable {
    typealias Status = DeliveryStatus
    typealias Outcome = AttemptOutcome

    let tenantID: UUID
    let deliveryID: UUID
    let deviceID: UUID
    let attempt: Int
    let status: Status
    let outcome: Outcome
    /// When the delivery is due again (status `queued`).
    let nextAttemptAt: Date?
    let httpStatus: Int?
    let messageID: String?
    let error: String?
    let startedAt: Date
    let finishedAt: Date
    /// Whether the attempt counts towards the delivery's attempts (and backoff): not when
    /// the trouble was this worker's configuration or an endpoint that was down.
    var spent = true
    /// Whether anything was sent: a delivery held back unsent leaves no attempt in history.
    var attempted = true
}

/// One notification to write during fan-out.
struct NotificationDraft: Sendable {
    let eventID: UUID
    let kind: EventKind
    let recipientID: UUID
    let app: AppKind
    let teamID: UUID?
    let activityID: UUID?
    let conversationID: UUID?
    let title: String
    let body: String
    let data: [String: String]
    let badge: Int
    let sound: Bool
    let threadID: String
    let imageURL: String?
    let eventAt: Date
    /// Set when the recipient must not be pushed (for example, they are viewing the
    /// conversation): the notification is recorded as `suppressed` with this reason.
    let suppressedReason: String?
}

/// A recipient as fan-out needs them: where they are and what their badge says.
struct RecipientProfile: Sendable {
    let id: UUID
    let app: AppKind
    let locale: String
    let timeZone: String
    let badge: Int
}

/// The outbox and the delivery queue, in SQL. Every statement is one round trip; claims and
/// acknowledgements are set-based over whole batches.
///
/// Runs on a pool whose connections work as `herald_dispatcher` (which sees the queue
/// tables of every tenant); fan-out switches to the tenant's own scope.
struct DeliveryQueue: Sendable {
    let pool: PostgresPool
    let worker: String
    let lease: Duration
    /// Only these tenants, or all when empty.
    let tenants: [UUID]

    private var leaseSeconds: Double { lease.timeInterval }

    // MARK: Events

    /// Locks up to `limit` events that are not fanned out yet, oldest first, for the rest of
    /// the transaction on `connection` (which works as `herald_dispatcher`). Another worker
    /// skips them; if this one dies, its transaction ends and they are free again. Events
    /// under a live lease (a large event another worker is fanning out in parts) are skipped.
    func claimEvents(limit: Int, on connection: PostgresConnection) async throws -> [ClaimedEvent] {
        let rows = try await connection.query(
            """
            -- A leased event is being fanned out part by part by the lease holder (a large
            -- group's message): it is left alone until the lease expires.
            SELECT tenant_id, id, kind, payload::text, occurred_at FROM outbox
            WHERE fanned_out_at IS NULL AND (lease_expires_at IS NULL OR lease_expires_at < now())
              AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
            ORDER BY seq LIMIT \(limit)
            FOR UPDATE SKIP LOCKED
            """)
        return try rows.map { row in
            let (tenantID, id, kind, payload, occurredAt) = try row.decode((UUID, UUID, String, String, Date).self)
            return ClaimedEvent(tenantID: tenantID, id: id, kind: kind, payload: payload, occurredAt: occurredAt)
        }
    }

    /// The recipients' locale, time zone and badge, in the tenant's scope.
    static func profiles(
        _ recipients: [EventRecipient], tenant: UUID, on connection: PostgresConnection
    ) async throws -> [Key: RecipientProfile] {
        guard !recipients.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT r.id, r.app, p.locale, p.time_zone,
                   (SELECT count(*) FROM activities a
                    WHERE a.tenant_id = p.tenant_id
                      AND CASE WHEN r.app = 'member' THEN a.assignee_id = r.id AND a.status = 'assigned'
                               ELSE a.manager_id = r.id AND a.status = 'completion_requested' END)::int
                 + (SELECT count(*) FROM conversation_participants cp
                    JOIN messages m ON m.tenant_id = cp.tenant_id AND m.conversation_id = cp.conversation_id
                                   AND m.seq > cp.last_read_seq AND NOT m.is_system AND m.sender_id <> cp.person_id
                    WHERE cp.tenant_id = p.tenant_id AND cp.person_id = r.id AND cp.left_at IS NULL)::int
            FROM (SELECT DISTINCT u.id, u.app FROM unnest(\(recipients.map(\.id))::uuid[], \(recipients.map(\.app.rawValue))::text[]) AS u(id, app)) r
            JOIN people p ON p.tenant_id = \(tenant) AND p.id = r.id
            """)
        var result: [Key: RecipientProfile] = [:]
        for row in rows {
            let (id, app, locale, timeZone, badge) = try row.decode((UUID, String, String, String, Int).self)
            guard let app = AppKind(rawValue: app) else { continue }
            result[Key(id: id, app: app)] = RecipientProfile(id: id, app: app, locale: locale, timeZone: timeZone, badge: badge)
        }
        return result
    }

    struct Key: Hashable {
        let id: UUID
        let app: AppKind
    }

    struct ParticipantKey: Hashable {
        let conversation: UUID
        let person: UUID
    }

    /// Muted and viewing, for the current participants of these conversations (only for
    /// `people`, when given).
    static func participantStates(
        _ conversations: [UUID], people: [UUID]? = nil, tenant: UUID, on connection: PostgresConnection
    ) async throws -> [ParticipantKey: ParticipantState] {
        guard !conversations.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT conversation_id, person_id, muted, coalesce(viewing_until > now(), false)
            FROM conversation_participants
            WHERE tenant_id = \(tenant) AND conversation_id = ANY(\(conversations)) AND left_at IS NULL
              AND (\(people == nil) OR person_id = ANY(\(people ?? [])))
            """)
        var result: [ParticipantKey: ParticipantState] = [:]
        for row in rows {
            let (conversation, person, muted, viewing) = try row.decode((UUID, UUID, Bool, Bool).self)
            result[ParticipantKey(conversation: conversation, person: person)] = ParticipantState(muted: muted, viewing: viewing)
        }
        return result
    }

    /// Deliveries fan-out may lease to its own worker as it creates them.
    struct FanOutClaim {
        let worker: String
        let lease: Duration
        /// At most this many.
        let room: Int
        /// Providers this worker holds back (`SendGate`): their deliveries are only queued.
        let paused: [PushProvider]
    }

    /// Writes the notifications and their deliveries (one per active device of the
    /// recipient's app) and marks the events fanned out, in the tenant's scope, in one
    /// statement. With `claim`, up to `claim.room` of the new deliveries are leased to that
    /// worker at once (first attempt started) and returned ready to send; the rest are
    /// queued. Idempotent: a notification that exists already is left alone, and so are its
    /// deliveries.
    /// - Returns: how many deliveries were created, and the ones leased to the worker.
    static func write(
        _ drafts: [NotificationDraft], events: [UUID], tenant: UUID, deadline: Duration, claim: FanOutClaim?,
        on connection: PostgresConnection
    ) async throws -> (created: Int, claimed: [ClaimedDelivery]) {
        // With no drafts the same statement only marks the events done.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try drafts.map { String(decoding: try encoder.encode($0.data), as: UTF8.self) }
        let ids = drafts.map { _ in UUID.v7() }
        let room = claim?.room ?? 0
        let worker = claim?.worker ?? ""
        let leaseSeconds = claim?.lease.timeInterval ?? 0
        let paused = claim?.paused.map(\.rawValue) ?? []
        let rows = try await connection.query(
            """
            WITH input AS (
                SELECT * FROM unnest(
                    \(ids)::uuid[], \(drafts.map(\.eventID))::uuid[], \(drafts.map(\.kind.rawValue))::text[],
                    \(drafts.map(\.recipientID))::uuid[], \(drafts.map(\.app.rawValue))::text[], \(drafts.map(\.teamID))::uuid[],
                    \(drafts.map(\.activityID))::uuid[], \(drafts.map(\.conversationID))::uuid[], \(drafts.map(\.title))::text[],
                    \(drafts.map(\.body))::text[], \(data)::text[], \(drafts.map(\.badge))::int[], \(drafts.map(\.sound))::bool[],
                    \(drafts.map(\.threadID))::text[], \(drafts.map(\.imageURL))::text[], \(drafts.map(\.eventAt))::timestamptz[],
                    \(drafts.map(\.suppressedReason))::text[])
                AS i(id, event_id, kind, recipient_id, app, team_id, activity_id, conversation_id, title, body, data, badge,
                     sound, thread_id, image_url, event_at, suppressed)
            ), reach AS (
                SELECT i.*, EXISTS (
                    SELECT 1 FROM devices d
                    WHERE d.tenant_id = \(tenant) AND d.person_id = i.recipient_id AND d.app = i.app
                      AND d.removed_at IS NULL AND d.deactivated_at IS NULL) AS reachable
                FROM input i
            ), inserted AS (
                INSERT INTO notifications (tenant_id, id, event_id, kind, recipient_id, app, team_id, activity_id,
                                           conversation_id, title, body, data, badge, sound, thread_id, image_url,
                                           status, reason, event_at)
                SELECT \(tenant), r.id, r.event_id, r.kind, r.recipient_id, r.app, r.team_id, r.activity_id, r.conversation_id,
                       r.title, r.body, r.data::jsonb, r.badge, r.sound, r.thread_id, r.image_url,
                       CASE WHEN r.suppressed IS NOT NULL THEN 'suppressed' WHEN r.reachable THEN 'queued' ELSE 'no_device' END,
                       CASE WHEN r.suppressed IS NOT NULL THEN r.suppressed
                            WHEN NOT r.reachable THEN 'no active device on the ' || r.app || ' app' END,
                       r.event_at
                FROM reach r
                ON CONFLICT ON CONSTRAINT notifications_once DO NOTHING
                RETURNING id, recipient_id, app, status
            ), targets AS (
                SELECT n.id AS notification_id, d.id AS device_id, d.provider,
                       row_number() OVER (ORDER BY n.id, d.id) <= \(room)
                           AND NOT d.provider = ANY(\(paused)::text[]) AS claimed
                FROM inserted n
                JOIN devices d ON d.tenant_id = \(tenant) AND d.person_id = n.recipient_id AND d.app = n.app
                                  AND d.removed_at IS NULL AND d.deactivated_at IS NULL
                WHERE n.status = 'queued'
            ), created AS (
                INSERT INTO deliveries (tenant_id, id, notification_id, device_id, provider, deadline_at, status, attempts,
                                        first_attempt_at, lease_owner, lease_expires_at)
                SELECT \(tenant), gen_random_uuid(), t.notification_id, t.device_id, t.provider,
                       now() + make_interval(secs => \(deadline.timeInterval)),
                       CASE WHEN t.claimed THEN 'sending' ELSE 'queued' END, CASE WHEN t.claimed THEN 1 ELSE 0 END,
                       CASE WHEN t.claimed THEN now() END, CASE WHEN t.claimed THEN \(worker) END,
                       CASE WHEN t.claimed THEN now() + make_interval(secs => \(leaseSeconds)) END
                FROM targets t
                ON CONFLICT ON CONSTRAINT deliveries_once DO NOTHING
                RETURNING id, notification_id, device_id, provider, status, deadline_at
            ), done AS (
                UPDATE outbox SET fanned_out_at = now(), lease_owner = NULL, lease_expires_at = NULL
                WHERE tenant_id = \(tenant) AND id = ANY(\(events)) AND fanned_out_at IS NULL
            )
            SELECT c.id, c.notification_id, c.device_id, c.provider, c.deadline_at, v.token, now(), NULL::int
            FROM created c JOIN devices v ON v.tenant_id = \(tenant) AND v.id = c.device_id
            WHERE c.status = 'sending'
            UNION ALL
            SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*)::int FROM created
            """)
        var created = 0
        var claimed: [ClaimedDelivery] = []
        let draftIndex = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        for row in rows {
            if let count = try row.decode(Int?.self, at: 7) {
                created = count
                continue
            }
            let (id, notificationID, deviceID, provider, deadlineAt, token, now) =
                try row.decode((UUID, UUID, UUID, String, Date, String, Date).self)
            guard let index = draftIndex[notificationID], let provider = PushProvider(rawValue: provider) else { continue }
            let draft = drafts[index]
            claimed.append(ClaimedDelivery(
                tenantID: tenant, id: id, deviceID: deviceID, provider: provider, app: draft.app, attempt: 1,
                firstAttemptAt: now, deadlineAt: deadlineAt, token: token, deviceActive: true, title: draft.title,
                body: draft.body, data: draft.data, badge: draft.badge, sound: draft.sound, threadID: draft.threadID,
                imageURL: draft.imageURL, eventAt: draft.eventAt, claimedAt: now))
        }
        return (created, claimed)
    }

    // MARK: Deliveries

    /// Leases up to `limit` due deliveries, shared fairly between the tenants that have
    /// any: the batch is filled round robin across tenants, so one tenant's burst cannot
    /// hold back another's single notification by more than a batch. Providers this worker
    /// holds back (`paused`) are skipped; other workers may take their deliveries.
    func claimDeliveries(limit: Int, paused: [PushProvider] = []) async throws -> [ClaimedDelivery] {
        let rows = try await pool.query(claim(limit: limit, paused: paused))
        let decoder = JSONDecoder()
        return try rows.map { row in
            let (tenantID, id, deviceID, provider, app, attempt, firstAttemptAt, deadlineAt, token, active) =
                try row.decode((UUID, UUID, UUID, String, String, Int, Date, Date, String, Bool).self)
            let title = try row.decode(String.self, at: 10), body = try row.decode(String.self, at: 11)
            let dataText = try row.decode(String.self, at: 12)
            let badge = try row.decode(Int.self, at: 13), sound = try row.decode(Bool.self, at: 14)
            let threadID = try row.decode(String.self, at: 15), imageURL = try row.decode(String?.self, at: 16)
            let eventAt = try row.decode(Date.self, at: 17), claimedAt = try row.decode(Date.self, at: 18)
            let data = (try? decoder.decode([String: String].self, from: Data(dataText.utf8))) ?? [:]
            return ClaimedDelivery(
                tenantID: tenantID, id: id, deviceID: deviceID, provider: PushProvider(rawValue: provider) ?? .fcm,
                app: AppKind(rawValue: app) ?? .member, attempt: attempt, firstAttemptAt: firstAttemptAt, deadlineAt: deadlineAt,
                token: token, deviceActive: active, title: title, body: body, data: data, badge: badge, sound: sound,
                threadID: threadID, imageURL: imageURL, eventAt: eventAt, claimedAt: claimedAt)
        }
    }

    /// The statement `claimDeliveries` runs (tests look at its plan).
    func claim(limit: Int, paused: [PushProvider] = []) -> PostgresQuery {
        """
            WITH paused AS (
                SELECT unnest(\(paused.map(\.rawValue))::text[]) AS provider
            ), busy AS (
                SELECT t.id FROM tenants t
                WHERE (\(tenants.isEmpty) OR t.id = ANY(\(tenants)))
                  AND EXISTS (SELECT 1 FROM deliveries d
                              WHERE d.tenant_id = t.id AND d.status = 'queued' AND d.due_at <= now()
                                AND d.provider NOT IN (SELECT provider FROM paused))
            ), share AS (
                SELECT ceil(\(limit)::numeric / greatest(count(*), 1))::int AS n FROM busy
            ), first AS (
                -- An equal slice per busy tenant, locked (every row locked costs a write).
                SELECT c.tenant_id, c.id, c.row, c.due_at, row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.due_at) AS turn
                FROM busy b CROSS JOIN LATERAL (
                    SELECT d.tenant_id, d.id, d.ctid AS row, d.due_at FROM deliveries d
                    WHERE d.tenant_id = b.id AND d.status = 'queued' AND d.due_at <= now()
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
                      AND d.provider NOT IN (SELECT provider FROM paused)
                      AND NOT EXISTS (SELECT 1 FROM first f WHERE f.tenant_id = d.tenant_id AND f.id = d.id)
                    ORDER BY d.due_at
                    LIMIT (SELECT greatest(0, \(limit) - count(*)) FROM first)
                    FOR NO KEY UPDATE OF d SKIP LOCKED) c
            ), picked AS (
                -- Round robin: every tenant's first, then every tenant's second, …
                SELECT row FROM (SELECT * FROM first UNION ALL SELECT * FROM more) offered
                ORDER BY turn, due_at LIMIT \(limit)
            )
            UPDATE deliveries d
            SET status = 'sending', lease_owner = \(worker), lease_expires_at = now() + make_interval(secs => \(leaseSeconds)),
                attempts = d.attempts + 1, first_attempt_at = coalesce(d.first_attempt_at, now()), updated_at = now()
            FROM notifications n, devices v
            -- The rows locked above, by tuple id. Joined by key instead, the planner weighed
            -- the batch (estimated at a tenth of the queued rows it was offered, or at its
            -- limit) against the table, and on a small or freshly analyzed one hashed the
            -- batch and scanned every delivery: 200 ms a claim in a burn-down of 100,000.
            -- A locked row keeps its tuple id until this statement ends. (One updated and
            -- committed after this statement began is locked in its new version, which the
            -- update does not see: it stays queued for the next claim.)
            WHERE d.ctid = ANY(ARRAY(SELECT row FROM picked))
              AND n.tenant_id = d.tenant_id AND n.id = d.notification_id
              AND v.tenant_id = d.tenant_id AND v.id = d.device_id
            RETURNING d.tenant_id, d.id, d.device_id, d.provider, n.app, d.attempts, d.first_attempt_at, d.deadline_at,
                      v.token, (v.removed_at IS NULL AND v.deactivated_at IS NULL), n.title, n.body, n.data::text, n.badge,
                      n.sound, n.thread_id, n.image_url, n.event_at, now()
            """
    }

    /// Records a batch of attempts. Only deliveries this worker still holds the lease on
    /// change state; every attempt is recorded, marked `counted` or not. A dead token
    /// deactivates its device whatever became of the lease.
    /// - Returns: the ids of the deliveries whose acknowledgement counted.
    @discardableResult
    func acknowledge(_ batch: [Acknowledgement]) async throws -> Set<UUID> {
        guard !batch.isEmpty else { return [] }
        let rows = try await pool.query(acknowledgement(batch))
        return Set(try rows.map { try $0.decode(UUID.self, at: 0) })
    }

    /// The statement `acknowledge` runs (tests look at its plan).
    func acknowledgement(_ batch: [Acknowledgement]) -> PostgresQuery {
        """
            WITH input AS (
                SELECT *, \(worker)::text AS worker FROM unnest(
                    \(batch.map(\.tenantID))::uuid[], \(batch.map(\.deliveryID))::uuid[], \(batch.map(\.deviceID))::uuid[],
                    \(batch.map(\.attempt))::int[], \(batch.map(\.status.rawValue))::text[], \(batch.map(\.outcome.rawValue))::text[],
                    \(batch.map(\.nextAttemptAt))::timestamptz[], \(batch.map(\.httpStatus))::int[], \(batch.map(\.messageID))::text[],
                    \(batch.map(\.error))::text[], \(batch.map(\.startedAt))::timestamptz[], \(batch.map(\.finishedAt))::timestamptz[],
                    \(batch.map { _ in UUID.v7() })::uuid[], \(batch.map(\.spent))::bool[], \(batch.map(\.attempted))::bool[])
                AS i(tenant_id, id, device_id, attempt, status, outcome, next_at, http_status, message_id, error, started_at,
                     finished_at, attempt_id, spent, attempted)
            ), acked AS (
                UPDATE deliveries d
                SET status = i.status, due_at = coalesce(i.next_at, d.due_at), lease_owner = NULL, lease_expires_at = NULL,
                    attempts = d.attempts - CASE WHEN i.spent THEN 0 ELSE 1 END,
                    first_attempt_at = CASE WHEN NOT i.spent AND d.attempts = 1 THEN NULL ELSE d.first_attempt_at END,
                    http_status = coalesce(i.http_status, d.http_status), message_id = coalesce(i.message_id, d.message_id),
                    last_error = i.error, sent_at = CASE WHEN i.status = 'sent' THEN i.finished_at ELSE d.sent_at END,
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
                WHERE d.tenant_id = i.tenant_id AND d.id = i.id AND d.lease_owner = i.worker
                RETURNING d.tenant_id, d.id
            ), recorded AS (
                INSERT INTO delivery_attempts (tenant_id, id, delivery_id, attempt, worker, started_at, finished_at, outcome,
                                               http_status, provider_error, message_id, next_attempt_at, counted)
                SELECT i.tenant_id, i.attempt_id, i.id, i.attempt, \(worker), i.started_at, i.finished_at, i.outcome, i.http_status,
                       i.error, i.message_id, CASE WHEN i.status = 'queued' THEN i.next_at END,
                       EXISTS (SELECT 1 FROM acked a WHERE a.tenant_id = i.tenant_id AND a.id = i.id)
                FROM input i
                WHERE i.attempted
            ), dead AS (
                UPDATE devices v SET deactivated_at = i.finished_at, deactivation_reason = i.error, updated_at = now()
                FROM input i
                WHERE i.outcome = 'dead_token' AND v.tenant_id = i.tenant_id AND v.id = i.device_id AND v.deactivated_at IS NULL
            )
            SELECT id FROM acked
            """
    }

    /// Extends the leases this worker holds on deliveries. (Events are held by the fan-out
    /// transaction's row locks; a large event's lease is renewed by each of its parts.)
    ///
    /// A delivery locked at this moment is being acknowledged, so it is passed by rather than
    /// waited for: waiting row by row behind the acknowledgements, while they in turn waited
    /// for the rows this statement had locked, stalled both for a second at a time (measured
    /// in a burn-down). Should that acknowledgement fail, the next renewal, a third of a lease
    /// later, extends it.
    func renewLeases() async throws {
        try await pool.query(
            """
            UPDATE deliveries d SET lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            FROM (SELECT tenant_id, id FROM deliveries
                  WHERE status = 'sending' AND lease_owner = \(worker)
                  FOR NO KEY UPDATE SKIP LOCKED) held
            WHERE d.tenant_id = held.tenant_id AND d.id = held.id
            """)
    }

    /// Puts deliveries whose lease expired (their worker died or stalled) back in the queue.
    /// - Returns: how many.
    func reclaimExpiredLeases() async throws -> Int {
        let rows = try await pool.query(
            """
            UPDATE deliveries SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE status = 'sending' AND lease_expires_at < now()
              AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants)))
            """)
        return rows.affectedRows ?? 0
    }

    /// Gives back leases this worker holds but will not finish (at shutdown): deliveries, and
    /// a large event it was fanning out when it was stopped.
    func releaseLeases() async throws {
        try await pool.query(
            """
            UPDATE deliveries SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
            WHERE status = 'sending' AND lease_owner = \(worker)
            """)
        try await releaseEventLeases()
    }

    /// Holds events for this worker (in the tenant's scope) for one lease: other workers'
    /// claims pass them by until it expires; each part of a large event's fan-out renews it.
    func leaseEvents(_ events: [UUID], tenant: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE outbox SET lease_owner = \(worker), lease_expires_at = now() + make_interval(secs => \(leaseSeconds))
            WHERE tenant_id = \(tenant) AND id = ANY(\(events))
            """)
    }

    /// Locks the event for the rest of the transaction if this worker still holds its lease
    /// and it is not done; `false` when its lease passed to another worker.
    func holdsEvent(_ event: UUID, tenant: UUID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query(
            """
            SELECT 1 FROM outbox
            WHERE tenant_id = \(tenant) AND id = \(event) AND lease_owner = \(worker) AND fanned_out_at IS NULL
            FOR UPDATE
            """
        ).count == 1
    }

    /// Gives back the events this worker leased and has not finished fanning out, so that any
    /// worker may take them at once rather than when the lease runs out.
    func releaseEventLeases() async throws {
        try await pool.query(
            """
            UPDATE outbox SET lease_owner = NULL, lease_expires_at = NULL
            WHERE fanned_out_at IS NULL AND lease_owner = \(worker)
            """)
    }

    /// Records that this worker holds `provider` back until `until`, and why (for `herald
    /// stats`). The row is a record for operators: other workers do not read it.
    func pause(_ provider: PushProvider, reason: String, for duration: Duration) async throws {
        try await pool.query(
            """
            INSERT INTO provider_pauses (provider, reason, worker, paused_at, until)
            VALUES (\(provider.rawValue), \(reason), \(worker), now(), now() + make_interval(secs => \(duration.timeInterval)))
            ON CONFLICT (provider, worker) DO UPDATE SET reason = excluded.reason, until = excluded.until,
                paused_at = CASE WHEN provider_pauses.until > now() THEN provider_pauses.paused_at ELSE excluded.paused_at END
            """)
    }

    /// This worker sends to `provider` again.
    func resume(_ provider: PushProvider) async throws {
        try await pool.query("DELETE FROM provider_pauses WHERE provider = \(provider.rawValue) AND worker = \(worker)")
    }

    /// Deliveries queued or being sent plus events not fanned out.
    func remaining() async throws -> Int {
        try await pool.query(
            """
            SELECT (SELECT count(*) FROM deliveries WHERE status IN ('queued', 'sending') AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
                 + (SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
            """
        ).single().decode(Int.self, at: 0)
    }

    /// Whether anything is left for a drain: events to fan out, deliveries due within
    /// `horizon`, or deliveries someone is sending.
    /// Deliveries of the providers in `paused` (this worker's configuration pauses) do not count.
    func hasWork(within horizon: Duration, paused: [PushProvider] = []) async throws -> Bool {
        try await pool.query(
            """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE fanned_out_at IS NULL AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
                OR EXISTS (SELECT 1 FROM deliveries
                           WHERE (status = 'sending'
                                  OR (status = 'queued' AND due_at <= now() + make_interval(secs => \(horizon.timeInterval))
                                      AND NOT provider = ANY(\(paused.map(\.rawValue))::text[])))
                             AND (\(tenants.isEmpty) OR tenant_id = ANY(\(tenants))))
            """
        ).single().decode(Bool.self, at: 0)
    }
}
