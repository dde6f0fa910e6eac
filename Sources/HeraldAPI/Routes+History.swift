import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// History as the CLI shows it, role-aware (a member sees their own notifications, a
    /// manager their teams', an admin or a tenant key acting as itself all), and the tenant's
    /// delivery statistics for admins.
    func addHistory(to group: RouterGroup<APIContext>) {
        group.get("history") { request, context in
            let caller = try context.requireCaller()
            let query = request.uri.queryParameters
            let paging = try Paging(query)
            let since = try query.get("since").map { text in
                try field("since") { Date().addingTimeInterval(-(try Input.duration(text, field: "since")).timeInterval) }
            }
            if let status = query.get("status"), !HistoryFilter.statuses.contains(status) {
                throw Problem(
                    .unprocessableContent, "Invalid fields", detail: "status is one of \(HistoryFilter.statuses.joined(separator: ", "))",
                    errors: [.init(field: "status", detail: "one of \(HistoryFilter.statuses.joined(separator: ", "))")])
            }
            // One more than the page, to know whether there is a next one.
            let filter = HistoryFilter(
                recipient: query.get("user"), activity: query.get("activity"), conversation: query.get("conversation"), event: query.get("event"),
                status: query.get("status"), since: since, limit: paging.limit + 1, after: paging.cursor, digest: query.get("digest"))
            let entries = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.history(viewer: caller.person, filter: filter) }
            let items = Array(entries.prefix(paging.limit))
            let next = entries.count > paging.limit ? items.last.map { PageCursor(at: $0.createdAt, id: $0.id) } : nil
            return try paging.response(
                items, next: next, path: "/v1/history", filters: ["user", "activity", "conversation", "event", "status", "since", "digest"],
                from: query)
        }

        group.get("history/:id") { _, context in
            let caller = try context.requireCaller()
            guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no notification with this id") }
            let detail = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.historyDetail(viewer: caller.person, id: id) }
            return try JSONBody.response(detail)
        }

        group.get("stats") { request, context in
            let caller = try context.requireCaller()
            let since = try request.uri.queryParameters.get("since").map { text in
                try field("since") { Date().addingTimeInterval(-(try Input.duration(text, field: "since")).timeInterval) }
            }
            let stats = try await store.tenantStats(viewer: caller.policy, tenant: caller.tenant, since: since)
            return try JSONBody.response(stats)
        }
    }
}
