import Foundation
import HeraldCore
import HeraldStore
import HeraldWebhooks
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/webhooks`.
    struct WebhookBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["url", "events", "description"]
        let url: String
        let events: [String]
        let description: String?
    }

    /// `POST /v1/webhooks/{id}/replay`.
    struct ReplayBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["since"]
        /// A duration back from now (`2h`, `3d`) or an RFC 3339 time.
        let since: String
    }

    /// The tenant's webhook endpoints (docs/webhooks.md): admins and tenant keys only
    /// (`AccessPolicy.mayManageWebhooks`, asked by the store); a member is forbidden.
    func addWebhooks(to group: RouterGroup<APIContext>) {
        group.get("webhooks") { _, context in
            let caller = try context.requireCaller()
            return try JSONBody.response(["items": try await store.withTenant(caller.tenant) { try await $0.webhooks(viewer: caller.policy) }])
        }

        group.post("webhooks") { request, context in
            let caller = try context.requireCaller()
            // Refused before the body is read (the store's rule, asked early).
            try TenantSession.requireWebhookManager(caller.policy)
            let body = try await JSONBody.decode(WebhookBody.self, from: request, context: context)
            // Checked, then stored as given (`url` refuses what it would have to rewrite).
            _ = try field("url") { try webhookPolicy.url(body.url) }
            let events = try field("events") { try WebhookEventFilter(body.events) }
            let description = try body.description.map { text in
                try field("description") { try Input.text(text, field: "description") }
            }
            let secret = WebhookSecret.generate()
            let endpoint = try await store.withTenant(caller.tenant) {
                try await $0.createWebhook(
                    viewer: caller.policy, url: body.url, events: events.patterns, description: description, secret: secret.text)
            }
            return try JSONBody.response(
                WebhookEndpointWithSecret(endpoint: endpoint, secret: secret.text), status: .created,
                headers: [.location: "/v1/webhooks/\(endpoint.id.lowercasedString)"])
        }

        group.get("webhooks/:id") { _, context in
            let (caller, id) = try webhookRequest(context)
            return try JSONBody.response(try await store.withTenant(caller.tenant) { try await $0.webhook(viewer: caller.policy, id: id) })
        }

        group.delete("webhooks/:id") { _, context in
            let (caller, id) = try webhookRequest(context)
            try await store.withTenant(caller.tenant) { try await $0.removeWebhook(viewer: caller.policy, id: id) }
            return Response(status: .noContent)
        }

        group.post("webhooks/:id/rotate-secret") { _, context in
            let (caller, id) = try webhookRequest(context)
            let secret = WebhookSecret.generate()
            let endpoint = try await store.withTenant(caller.tenant) {
                try await $0.rotateWebhookSecret(viewer: caller.policy, id: id, secret: secret.text)
            }
            return try JSONBody.response(WebhookEndpointWithSecret(endpoint: endpoint, secret: secret.text))
        }

        group.get("webhooks/:id/attempts") { request, context in
            let (caller, id) = try webhookRequest(context)
            let paging = try Paging(request.uri.queryParameters)
            let page = try await store.withTenant(caller.tenant) {
                try await $0.webhookAttempts(viewer: caller.policy, id: id, after: paging.cursor, limit: paging.limit)
            }
            return try paging.response(
                page.items, next: page.next, path: "/v1/webhooks/\(id.lowercasedString)/attempts", filters: [], from: request.uri.queryParameters)
        }

        group.post("webhooks/:id/replay") { request, context in
            let (caller, id) = try webhookRequest(context)
            let body = try await JSONBody.decode(ReplayBody.self, from: request, context: context)
            let since = try field("since") { try Input.since(body.since, now: Date()) }
            let queued = try await store.withTenant(caller.tenant) { try await $0.replayWebhook(viewer: caller.policy, id: id, since: since) }
            return try JSONBody.response(["queued": queued], status: .accepted)
        }
    }

    private func webhookRequest(_ context: APIContext) throws -> (Caller, UUID) {
        let caller = try context.requireCaller()
        guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no webhook endpoint with this id") }
        return (caller, id)
    }
}
