import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// For admins (and tenant keys): the tenant's webhook endpoints, their state (why one is
    /// disabled), and each one's latest attempts.
    func addWebhooks(to console: RouterGroup<APIContext>) {
        console.get("webhooks") { request, _ in
            await page {
                let session = try await requireSession(request)
                let viewer = AccessPolicy(session.authentication.person)
                let endpoints = try await Self.refusingAsPages(session) {
                    try await store.withTenant(session.authentication.tenant) { tenant in
                        var shown: [(WebhookEndpointRecord, [WebhookAttemptRecord])] = []
                        for endpoint in try await tenant.webhooks(viewer: viewer) {
                            shown.append(
                                (endpoint, try await tenant.webhookAttempts(viewer: viewer, id: endpoint.id, limit: Self.attemptsShown).items))
                        }
                        return shown
                    }
                }
                return html(
                    "webhooks",
                    [
                        "pageTitle": "Webhooks",
                        "endpoints": endpoints.map { endpoint, attempts in
                            [
                                "id": endpoint.id.lowercasedString, "url": endpoint.url, "events": endpoint.events.joined(separator: ", "),
                                "description": endpoint.description ?? "", "active": endpoint.state == .active,
                                "disabledReason": endpoint.disabledReason ?? "", "disabledAt": endpoint.disabledAt.map(Self.shown) ?? "",
                                "attempts": attempts.map { attempt in
                                    [
                                        "at": Self.shown(attempt.at), "event": attempt.eventType, "attempt": attempt.attempt,
                                        "status": attempt.status.map(String.init) ?? "—", "ok": (200...299).contains(attempt.status ?? 0),
                                        "error": attempt.error ?? "", "milliseconds": attempt.durationMs
                                    ] as [String: Any]
                                }
                            ] as [String: Any]
                        }
                    ], session: session)
            }
        }
    }

    /// How many of an endpoint's latest attempts the page shows.
    static let attemptsShown = 10
}
