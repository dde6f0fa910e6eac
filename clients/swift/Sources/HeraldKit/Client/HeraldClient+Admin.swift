import Foundation

/// What admins (and tenant keys) manage: webhook endpoints and the reminder policy
/// (docs/webhooks.md, docs/notifications.md in the Herald repository).
extension HeraldClient {
    /// The tenant's webhook endpoints.
    public func webhooks() async throws -> [WebhookEndpoint] {
        try await call("GET", "/v1/webhooks", as: Items<WebhookEndpoint>.self).0.items
    }

    public func webhook(_ id: UUID) async throws -> WebhookEndpoint { try await call("GET", "/v1/webhooks/\(id.lowercased)").0 }

    /// Registers an endpoint for `events` (patterns: `activity.*`, `message.created`, `*`);
    /// the answer carries its signing secret, shown this once.
    public func createWebhook(url: String, events: [String], description: String? = nil) async throws -> WebhookSecret {
        struct Body: Encodable {
            var url: String
            var events: [String]
            var description: String?
        }
        return try await call("POST", "/v1/webhooks", json: Body(url: url, events: events, description: description)).0
    }

    /// Removes an endpoint with its queued events and attempts.
    public func removeWebhook(_ id: UUID) async throws { try await perform("DELETE", "/v1/webhooks/\(id.lowercased)") }

    /// A new secret (shown this once); requests carry both signatures for a day.
    public func rotateWebhookSecret(_ id: UUID) async throws -> WebhookSecret {
        try await call("POST", "/v1/webhooks/\(id.lowercased)/rotate-secret").0
    }

    /// An endpoint's attempts, newest first, a page at a time.
    public func webhookAttempts(_ id: UUID, limit: Int = 50, cursor: String? = nil) async throws -> Page<WebhookAttempt> {
        let target = "/v1/webhooks/\(id.lowercased)/attempts" + query([("limit", "\(limit)"), ("cursor", cursor)])
        let (items, response) = try await call("GET", target, as: Items<WebhookAttempt>.self)
        return Page(items: items.items, next: nextCursor(response.headers["link"]))
    }

    /// Sends the endpoint's events since `since` (`2h`, `3d`, or an RFC 3339 time) again with
    /// their ids, enabling it if it was disabled; answers how many were queued.
    public func replayWebhook(_ id: UUID, since: String) async throws -> Int {
        struct Queued: Decodable { var queued: Int }
        return try await call("POST", "/v1/webhooks/\(id.lowercased)/replay", json: ["since": since], as: Queued.self).0.queued
    }

    /// The tenant's reminder policy.
    public func policy() async throws -> ReminderPolicy { try await call("GET", "/v1/policy").0 }

    /// Replaces the policy (every field; admins and keys); answers it as stored.
    public func setPolicy(_ policy: ReminderPolicy) async throws -> ReminderPolicy { try await call("PUT", "/v1/policy", json: policy).0 }
}
