import Foundation
import HeraldCore
import HeraldPostgres
import Logging

/// The webhooks' queue across tenants (docs/webhooks.md), as `herald_webhooks`: the feeder that
/// turns the durable feed into one message per subscribed endpoint, and the leases senders
/// take on them, at most `WebhookQueue.perEndpoint` in flight to one endpoint.
public enum WebhookQueue {
    /// How far the stored cursor may lag behind where the feeder read, when no message was
    /// written (`Store.feedWebhooks`); the live feed is pruned only up to the stored cursor.
    static let cursorLag: Int64 = 10_000
    /// Requests in flight to one endpoint, across every worker.
    public static let perEndpoint = 10
    /// How long a claim holds a message: its sender renews the lease every second while the
    /// request is in flight (10 s at most), so a worker that dies holds nothing for longer.
    public static let lease: Duration = .seconds(5)
    /// The advisory locks that make the feeder, and the claim, one at a time across workers.
    static let feederLock: Int64 = 0x4865_7261_6C64_5746
    static let claimLock: Int64 = 0x4865_7261_6C64_5743
    static let setup = DatabaseRole.webhooks.forTransaction
    /// For the statements whose every plan is the same (rows looked up by key from the arrays
    /// they are given: recording attempts, renewing leases), planned once per connection
    /// rather than at every call. A worker's pool plans each statement anew by default
    /// (`force_custom_plan`, for the claims), and planning the record took as long as running
    /// it: 0.6 ms a call, 0.2 ms an event.
    static let keyedSetup = setup + "; SET LOCAL plan_cache_mode = force_generic_plan"
}

extension Store {
    /// Wake-ups for new rows of the durable feed (pending and numbered), a subscription on the
    /// store's one LISTEN connection (`notifier`): hints only, the tables are the truth. Call
    /// `stop` to end the stream.
    public func feedWakes() -> (wakes: AsyncStream<Void>, stop: @Sendable () -> Void) {
        let listener = notifier.listen(to: [LiveFeed.pendingChannel, LiveFeed.feedChannel])
        let wakes = AsyncStream<Void> { continuation in
            let task = Task {
                for await event in listener.events {
                    if case .disconnected = event { continue }
                    continuation.yield()
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return (wakes, { listener.stop() })
    }

    /// Reads the feed after the webhook cursor (rows of tenants with an endpoint, at most
    /// `limit`), lets `messages` decide what each endpoint gets, writes those messages and
    /// moves the cursor, in one transaction (one feeder at a time): every committed event
    /// becomes its messages exactly once.
    ///
    /// The cursor row is written only with messages, or once it lags `WebhookQueue.cursorLag`
    /// positions behind: each write is a version of the one row that vacuum cannot remove while
    /// another session holds a snapshot, and every round read the whole chain (10,600 versions
    /// after 7 minutes of one). Between writes the feeder starts after `floor`, where its own
    /// rounds reached; another feeder starting at the stored cursor reads again only rows that
    /// made no message.
    /// - Parameter floor: where this feeder's rounds reached; it is moved to where this one does.
    /// - Returns: how many feed rows were read.
    @discardableResult
    public func feedWebhooks(
        limit: Int = 1_000, floor: WebhookFeedFloor = WebhookFeedFloor(),
        _ messages: @Sendable ([WebhookFeedRow], [WebhookSubscription]) throws -> [WebhookMessageDraft]
    ) async throws -> Int {
        let (read, reached) = try await pool.withTransaction(setup: WebhookQueue.setup) { connection -> (Int, Int64?) in
            try await connection.query("SELECT pg_advisory_xact_lock(\(WebhookQueue.feederLock))")
            let (stored, head) = try await connection.query(
                "SELECT (SELECT position FROM webhook_cursor WHERE id = 1), (SELECT coalesce(max(position), 0) FROM live_feed)"
            ).single().decode((Int64, Int64).self)
            let cursor = max(stored, floor.position)
            guard head > cursor else { return (0, nil) }
            // Positions become visible in order (the sequencer): every row up to `head` is seen.
            let rows = try await connection.query(
                """
                SELECT f.position, f.tenant_id, f.kind, f.conversation_id, f.created_at,
                       CASE WHEN f.kind IN ('outcome', 'device') THEN f.payload->>'type' END,
                       CASE WHEN f.kind IN ('outcome', 'device') THEN (f.payload->'data')::text ELSE f.payload::text END
                FROM live_feed f
                WHERE f.position > \(cursor) AND f.position <= \(head)
                  AND EXISTS (SELECT FROM webhook_endpoints w WHERE w.tenant_id = f.tenant_id)
                ORDER BY f.position \(limit: limit)
                """
            ).map { row -> WebhookFeedRow in
                let (position, tenant, kind, conversation, created, type, json) = try row.decode(
                    (Int64, UUID, String, UUID?, Date, String?, String).self)
                let payload: WebhookFeedRow.Payload =
                    if let type { .event(type: type, data: json) } else {
                        .live(try TenantSession.livePayload(kind, conversation: conversation, json: json))
                    }
                return WebhookFeedRow(position: position, tenantID: tenant, createdAt: created, payload: payload)
            }
            let reached = rows.count == limit ? rows[rows.count - 1].position : head
            let tenants = Array(Set(rows.map(\.tenantID)))
            let subscriptions: [WebhookSubscription] =
                tenants.isEmpty
                ? []
                : try await connection.query(
                    "SELECT tenant_id, id, events, created_at FROM webhook_endpoints WHERE tenant_id = ANY(\(tenants)::uuid[])"
                ).map { row in
                    let (tenant, id, events, created) = try row.decode((UUID, UUID, [String], Date).self)
                    return WebhookSubscription(tenantID: tenant, endpointID: id, patterns: events, createdAt: created)
                }
            let drafts = try messages(rows, subscriptions)
            let flat = drafts.flatMap { draft in draft.endpoints.map { (draft, $0) } }
            if !flat.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO webhook_messages (tenant_id, endpoint_id, id, type, body, created_at)
                    SELECT * FROM unnest(\(flat.map(\.0.tenantID))::uuid[], \(flat.map(\.1))::uuid[], \(flat.map(\.0.id))::uuid[],
                                         \(flat.map(\.0.type))::text[], \(flat.map(\.0.body))::text[], \(flat.map(\.0.createdAt))::timestamptz[])
                    ON CONFLICT DO NOTHING
                    """)
            }
            if !flat.isEmpty || reached - stored >= WebhookQueue.cursorLag {
                try await connection.query("UPDATE webhook_cursor SET position = \(reached) WHERE id = 1")
            }
            return (rows.count, reached)
        }
        // Only once the round committed (a failed one reads its rows again).
        if let reached { floor.reached(reached) }
        return read
    }

    /// Leases due messages of active endpoints to `worker`: at most `limit`, and to each
    /// endpoint no more than `WebhookQueue.perEndpoint` less what it has in flight already.
    ///
    /// The messages are picked by each endpoint's index and leased by tuple id, as the
    /// dispatcher's claim leases deliveries. Joined by key instead, the planner weighed the
    /// picked messages against the queue's statistics: on a queue that grew faster than they
    /// did it walked every queued message and picked again for each (25 ms a claim), and with
    /// a generic plan it hashed the batch against a scan of the table (4 ms a claim at 20,000
    /// messages; herald bench webhooks). Claims are one at a time (an advisory lock), and only
    /// they change a queued message (the others change sent ones, or delete): a message changed
    /// meanwhile has a new tuple id and is left to the next claim.
    public func claimWebhookMessages(worker: String, limit: Int) async throws -> [ClaimedWebhookMessage] {
        guard limit > 0 else { return [] }
        return try await pool.withTransaction(setup: WebhookQueue.setup) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(WebhookQueue.claimLock))")
            return try await connection.query(
                """
                WITH picked AS (
                    SELECT m.row
                    FROM webhook_endpoints e
                    CROSS JOIN LATERAL (
                        SELECT count(*)::int AS n FROM webhook_messages s
                        WHERE s.tenant_id = e.tenant_id AND s.endpoint_id = e.id AND s.status = 'sending') busy
                    CROSS JOIN LATERAL (
                        SELECT m.ctid AS row FROM webhook_messages m
                        WHERE m.tenant_id = e.tenant_id AND m.endpoint_id = e.id AND m.status = 'queued' AND m.due_at <= now()
                        ORDER BY m.due_at, m.id LIMIT greatest(0, \(WebhookQueue.perEndpoint) - busy.n)) m
                    WHERE e.state = 'active'
                    \(limit: limit)
                ), claimed AS (
                    UPDATE webhook_messages m
                    SET status = 'sending', attempts = m.attempts + 1, lease_owner = \(worker),
                        lease_expires_at = now() + make_interval(secs => \(WebhookQueue.lease.timeInterval))
                    -- (Not `status = 'queued'`: that matched the queue's partial index, and the
                    -- planner walked the endpoint's whole queue through it to find these rows.)
                    WHERE m.ctid = ANY(ARRAY(SELECT row FROM picked)) AND m.lease_owner IS NULL
                    RETURNING m.tenant_id, m.endpoint_id, m.id, m.type, m.body, m.attempts
                )
                SELECT c.tenant_id, c.endpoint_id, c.id, c.type, c.body, c.attempts, e.url, e.secret,
                       CASE WHEN e.previous_until > now() THEN e.previous_secret END
                FROM claimed c JOIN webhook_endpoints e ON e.tenant_id = c.tenant_id AND e.id = c.endpoint_id
                """
            ).map { row in
                let (tenant, endpoint, id, type, body, attempt, url, secret, previous) = try row.decode(
                    (UUID, UUID, UUID, String, String, Int, String, String, String?).self)
                return ClaimedWebhookMessage(
                    target: WebhookTarget(tenantID: tenant, id: endpoint, url: url, secret: secret, previousSecret: previous), id: id,
                    type: type, body: body, attempt: attempt)
            }
        }
    }

    /// Records attempts: each one is kept; a message changes only while `worker` still holds
    /// its lease; an outcome that disables its endpoint disables it, with the reason.
    public func recordWebhookAttempts(_ results: [WebhookAttemptResult], worker: String) async throws {
        guard !results.isEmpty else { return }
        let outcomes = results.map { result -> (String, Date?, String?) in
            switch result.outcome {
            case .delivered: ("delivered", nil, nil)
            case .retry(let at): ("retry", at, nil)
            case .disable(let reason): ("disable", nil, reason)
            }
        }
        try await pool.withTransaction(setup: WebhookQueue.keyedSetup) { connection in
            try await connection.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(
                        \(results.map(\.message.target.tenantID))::uuid[], \(results.map(\.message.target.id))::uuid[],
                        \(results.map(\.message.id))::uuid[], \(results.map(\.message.type))::text[], \(results.map(\.message.attempt))::int[],
                        \(outcomes.map(\.0))::text[], \(outcomes.map(\.1))::timestamptz[], \(outcomes.map(\.2))::text[],
                        \(results.map(\.httpStatus))::int[], \(results.map(\.error))::text[], \(results.map(\.response))::text[],
                        \(results.map(\.durationMs))::int[], \(results.map(\.at))::timestamptz[])
                    AS i(tenant_id, endpoint_id, message_id, type, attempt, outcome, retry_at, reason, http_status, error, response,
                         duration_ms, at)
                ), kept AS (
                    INSERT INTO webhook_attempts (tenant_id, endpoint_id, id, message_id, type, attempt, http_status, error, response,
                                                  duration_ms, worker, at)
                    SELECT i.tenant_id, i.endpoint_id, gen_random_uuid(), i.message_id, i.type, i.attempt, i.http_status, i.error,
                           i.response, i.duration_ms, \(worker), i.at
                    FROM input i
                    -- (An endpoint removed meanwhile takes its attempts with it.)
                    WHERE EXISTS (SELECT FROM webhook_endpoints e WHERE e.tenant_id = i.tenant_id AND e.id = i.endpoint_id)
                ), settled AS (
                    UPDATE webhook_messages m
                    SET status = CASE i.outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'queued' ELSE 'failed' END,
                        due_at = coalesce(i.retry_at, m.due_at), lease_owner = NULL, lease_expires_at = NULL,
                        settled_at = CASE WHEN i.outcome <> 'retry' THEN i.at END
                    FROM input i
                    WHERE m.tenant_id = i.tenant_id AND m.endpoint_id = i.endpoint_id AND m.id = i.message_id AND m.lease_owner = \(worker)
                )
                UPDATE webhook_endpoints e SET state = 'disabled', disabled_reason = i.reason, disabled_at = i.at, updated_at = now()
                FROM input i
                WHERE i.outcome = 'disable' AND e.tenant_id = i.tenant_id AND e.id = i.endpoint_id AND e.state = 'active'
                """)
        }
    }

    /// Renews `worker`'s leases on `messages` (those whose requests are in flight). A message
    /// its attempt is being recorded for right now is passed over (its lease ends with the
    /// record): the renewal never waits for a record's locks, so the two never deadlock, as
    /// they did on a new machine every few seconds when each locked its rows in its own order.
    public func renewWebhookLeases(_ messages: [WebhookMessageKey], worker: String) async throws {
        guard !messages.isEmpty else { return }
        try await pool.withTransaction(setup: WebhookQueue.keyedSetup) { connection in
            try await connection.query(
                """
                WITH held AS (
                    SELECT m.tenant_id, m.endpoint_id, m.id FROM webhook_messages m
                    JOIN unnest(\(messages.map(\.tenantID))::uuid[], \(messages.map(\.endpointID))::uuid[], \(messages.map(\.id))::uuid[])
                         AS i(tenant_id, endpoint_id, id) ON m.tenant_id = i.tenant_id AND m.endpoint_id = i.endpoint_id AND m.id = i.id
                    WHERE m.status = 'sending' AND m.lease_owner = \(worker)
                    FOR NO KEY UPDATE OF m SKIP LOCKED
                )
                UPDATE webhook_messages m SET lease_expires_at = now() + make_interval(secs => \(WebhookQueue.lease.timeInterval))
                FROM held h WHERE m.tenant_id = h.tenant_id AND m.endpoint_id = h.endpoint_id AND m.id = h.id
                """)
        }
    }

    /// Queues again the messages whose sender's lease ran out (a worker that died): the
    /// attempt it made, if any, is not counted. - Returns: how many.
    @discardableResult
    public func reclaimExpiredWebhookLeases() async throws -> Int {
        try await pool.withTransaction(setup: WebhookQueue.setup) { connection in
            try await connection.query(
                """
                WITH back AS (
                    UPDATE webhook_messages SET status = 'queued', attempts = greatest(0, attempts - 1), lease_owner = NULL,
                        lease_expires_at = NULL, due_at = now()
                    WHERE status = 'sending' AND lease_expires_at < now()
                    RETURNING 1
                )
                SELECT count(*)::int FROM back
                """
            ).single().decode(Int.self, at: 0)
        }
    }

    /// Gives back the leases `worker` holds (a graceful stop): they are sent by the next claim.
    public func releaseWebhookLeases(worker: String) async throws {
        try await pool.withTransaction(setup: WebhookQueue.setup) { connection in
            try await connection.query(
                """
                UPDATE webhook_messages SET status = 'queued', attempts = greatest(0, attempts - 1), lease_owner = NULL,
                    lease_expires_at = NULL
                WHERE status = 'sending' AND lease_owner = \(worker)
                """)
        }
    }

    /// Removes attempts, and settled messages, older than `age` (history's retention), and
    /// messages still queued for a disabled endpoint after that long. - Returns: how many rows.
    @discardableResult
    public func pruneWebhookRecords(olderThan age: Duration) async throws -> Int {
        try await pool.withTransaction(setup: WebhookQueue.setup) { connection in
            try await connection.query(
                """
                WITH attempts AS (
                    DELETE FROM webhook_attempts WHERE at < now() - make_interval(secs => \(age.timeInterval)) RETURNING 1
                ), messages AS (
                    DELETE FROM webhook_messages
                    WHERE created_at < now() - make_interval(secs => \(age.timeInterval)) AND status <> 'sending' RETURNING 1
                )
                SELECT (SELECT count(*) FROM attempts)::int + (SELECT count(*) FROM messages)::int
                """
            ).single().decode(Int.self, at: 0)
        }
    }
}
