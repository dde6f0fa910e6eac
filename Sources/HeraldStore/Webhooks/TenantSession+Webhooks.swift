import Foundation
import HeraldCore
import HeraldPostgres

/// A tenant's webhook endpoints (docs/webhooks.md), in its scope, for those who may manage them
/// (`AccessPolicy.mayManageWebhooks`: anyone else is forbidden, before anything is read). The
/// caller checks the URL and the patterns; the store keeps them.
extension TenantSession {
    /// At most this many endpoints per tenant.
    public static let maxWebhooks = 20
    /// How long the previous secret is still signed with after a rotation.
    public static let previousSecretLife: Duration = .seconds(24 * 3600)

    /// Registers an endpoint with its (new) secret.
    /// - Throws: `StoreError.conflict` past `maxWebhooks`.
    public func createWebhook(viewer: AccessPolicy, url: String, events: [String], description: String?, secret: String) async throws
        -> WebhookEndpointRecord
    {
        try Self.requireWebhookManager(viewer)
        let count = try await connection.query("SELECT count(*)::int FROM webhook_endpoints WHERE tenant_id = \(tenantID)")
            .single().decode(Int.self, at: 0)
        guard count < Self.maxWebhooks else {
            throw StoreError(.conflict, "a tenant has at most \(Self.maxWebhooks) webhook endpoints; remove one first")
        }
        let id = UUID.v7()
        try await connection.query(
            """
            INSERT INTO webhook_endpoints (tenant_id, id, url, events, description, secret)
            VALUES (\(tenantID), \(id), \(url), \(events)::text[], \(description), \(secret))
            """)
        return try await webhook(viewer: viewer, id: id)
    }

    /// The tenant's endpoints, oldest first.
    public func webhooks(viewer: AccessPolicy) async throws -> [WebhookEndpointRecord] {
        try Self.requireWebhookManager(viewer)
        return try await connection.query(
            "SELECT \(unsafeRaw: Self.webhookColumns) FROM webhook_endpoints w WHERE w.tenant_id = \(tenantID) ORDER BY w.created_at, w.id"
        ).map(Self.webhook)
    }

    /// One endpoint. - Throws: `StoreError.notFound` (also for another tenant's).
    public func webhook(viewer: AccessPolicy, id: UUID) async throws -> WebhookEndpointRecord {
        try Self.requireWebhookManager(viewer)
        let rows = try await connection.query(
            "SELECT \(unsafeRaw: Self.webhookColumns) FROM webhook_endpoints w WHERE w.tenant_id = \(tenantID) AND w.id = \(id)")
        guard let row = rows.first else { throw Self.noWebhook(id) }
        return try Self.webhook(row)
    }

    /// Removes an endpoint with its queued messages and its attempts.
    /// - Throws: `StoreError.notFound`.
    public func removeWebhook(viewer: AccessPolicy, id: UUID) async throws {
        try Self.requireWebhookManager(viewer)
        // Locked first: a sender recording an attempt meanwhile waits, then finds it gone.
        let locked = try await connection.query("SELECT id FROM webhook_endpoints WHERE tenant_id = \(tenantID) AND id = \(id) FOR UPDATE")
        guard !locked.isEmpty else { throw Self.noWebhook(id) }
        try await connection.query("DELETE FROM webhook_attempts WHERE tenant_id = \(tenantID) AND endpoint_id = \(id)")
        try await connection.query("DELETE FROM webhook_messages WHERE tenant_id = \(tenantID) AND endpoint_id = \(id)")
        let rows = try await connection.query("DELETE FROM webhook_endpoints WHERE tenant_id = \(tenantID) AND id = \(id) RETURNING id")
        guard !rows.isEmpty else { throw Self.noWebhook(id) }
    }

    /// Makes `secret` the endpoint's; the one it replaces is still signed with for
    /// `previousSecretLife` (the requests carry both signatures meanwhile).
    /// - Throws: `StoreError.notFound`.
    public func rotateWebhookSecret(viewer: AccessPolicy, id: UUID, secret: String) async throws -> WebhookEndpointRecord {
        try Self.requireWebhookManager(viewer)
        let rows = try await connection.query(
            """
            UPDATE webhook_endpoints SET previous_secret = secret, secret = \(secret),
                previous_until = now() + make_interval(secs => \(Self.previousSecretLife.timeInterval)), updated_at = now()
            WHERE tenant_id = \(tenantID) AND id = \(id) RETURNING id
            """)
        guard !rows.isEmpty else { throw Self.noWebhook(id) }
        return try await webhook(viewer: viewer, id: id)
    }

    /// The endpoint's attempts, newest first, a page at a time.
    /// - Throws: `StoreError.notFound` for an unknown endpoint.
    public func webhookAttempts(viewer: AccessPolicy, id: UUID, after cursor: PageCursor? = nil, limit: Int = 50) async throws -> Page<
        WebhookAttemptRecord
    > {
        try Self.requireWebhookManager(viewer)
        _ = try await webhook(viewer: viewer, id: id)
        let (at, last) = (cursor?.at, cursor?.id)
        let attempts = try await connection.query(
            """
            SELECT a.id, a.endpoint_id, a.message_id, a.type, a.attempt, a.http_status, a.error, a.response, a.duration_ms, a.at
            FROM webhook_attempts a WHERE a.tenant_id = \(tenantID) AND a.endpoint_id = \(id)
              AND (\(at)::timestamptz IS NULL OR (a.at, a.id) < (\(at), \(last)))
            ORDER BY a.at DESC, a.id DESC \(limit: limit + 1)
            """
        ).map { row in
            let (id, endpoint, message, type, attempt, status, error, response, duration, at) = try row.decode(
                (UUID, UUID, UUID, String, Int, Int?, String?, String?, Int, Date).self)
            return WebhookAttemptRecord(
                id: id, webhookID: endpoint, messageID: message, eventType: type, attempt: attempt, status: status, error: error,
                response: response, durationMs: duration, at: at)
        }
        let page = Array(attempts.prefix(limit))
        return Page(items: page, next: attempts.count > limit ? page.last.map { PageCursor(at: $0.at, id: $0.id) } : nil)
    }

    /// Sends the endpoint's messages of events since `since` again, with their ids, and makes a
    /// disabled endpoint active again (the way to resume one after its backend is fixed).
    /// - Returns: how many messages are queued again.
    /// - Throws: `StoreError.notFound`.
    public func replayWebhook(viewer: AccessPolicy, id: UUID, since: Date) async throws -> Int {
        try Self.requireWebhookManager(viewer)
        let rows = try await connection.query(
            """
            UPDATE webhook_endpoints SET state = 'active', disabled_reason = NULL, disabled_at = NULL, updated_at = now()
            WHERE tenant_id = \(tenantID) AND id = \(id) RETURNING id
            """)
        guard !rows.isEmpty else { throw Self.noWebhook(id) }
        // A message being sent right now is queued again too: its sender's record then leaves
        // it alone (the lease is gone), and it is sent once more, as asked.
        return try await connection.query(
            """
            WITH again AS (
                UPDATE webhook_messages SET status = 'queued', attempts = 0, due_at = now(), settled_at = NULL, lease_owner = NULL,
                    lease_expires_at = NULL
                WHERE tenant_id = \(tenantID) AND endpoint_id = \(id) AND created_at >= \(since)
                RETURNING 1
            )
            SELECT count(*)::int FROM again
            """
        ).single().decode(Int.self, at: 0)
    }

    /// `AccessPolicy.mayManageWebhooks`, asked first by every call here.
    public static func requireWebhookManager(_ viewer: AccessPolicy) throws {
        guard viewer.mayManageWebhooks else { throw StoreError(.forbidden, "only a tenant admin or a tenant key may manage webhooks") }
    }

    private static func noWebhook(_ id: UUID) -> StoreError {
        StoreError(.notFound, "no webhook endpoint \(id.lowercasedString)")
    }

    static let webhookColumns = """
        w.id, w.url, w.events, w.description, w.state, w.disabled_reason, w.disabled_at, \
        CASE WHEN w.previous_until > now() THEN w.previous_until END, w.created_at, w.updated_at
        """

    static func webhook(_ row: PostgresRow) throws -> WebhookEndpointRecord {
        let (id, url, events, description, state, reason, disabledAt, previousUntil, created, updated) = try row.decode(
            (UUID, String, [String], String?, String, String?, Date?, Date?, Date, Date).self)
        return WebhookEndpointRecord(
            id: id, url: url, events: events, description: description, state: try decodeEnum(state), disabledReason: reason,
            disabledAt: disabledAt, previousSecretUntil: previousUntil, createdAt: created, updatedAt: updated)
    }
}
