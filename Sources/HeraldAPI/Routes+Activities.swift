import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/activities`.
    struct ActivityBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["team", "assignee", "name", "deadline", "priority"]
        let team: String
        let assignee: String
        let name: String
        let deadline: String
        let priority: String?
    }

    /// `POST /v1/activities/{id}/reject` (the other actions take no body).
    struct ReasonBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["reason"]
        let reason: String?
    }

    /// `PUT /v1/activities/{id}/live-activity`.
    struct LiveActivityTokenBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["token", "app"]
        /// The Live Activity's update token (`Activity.pushTokenUpdates`), hexadecimal.
        let token: String
        let app: String?
    }

    /// Activities as their viewer may see them (see `TenantSession.activities(viewer:…)`),
    /// each with an `ETag` of its version; transitions honour `If-Match`.
    func addActivities(to group: RouterGroup<APIContext>) {
        group.get("activities") { request, context in
            let caller = try context.requireCaller()
            let query = request.uri.queryParameters
            let paging = try Paging(query)
            let status = try query.get("status").map { text in
                try field("status") { try Input.choice(text, field: "status", as: ActivityStatus.self) }
            }
            let filter = TenantSession.ActivityFilter(team: query.get("team"), status: status, assignee: query.get("assignee"))
            let page = try await store.withTenant(caller.tenant, readOnly: true) {
                try await $0.activities(viewer: caller.person, filter: filter, limit: paging.limit, after: paging.cursor)
            }
            return try paging.response(page.items, next: page.next, path: "/v1/activities", filters: ["status", "team", "assignee"], from: query)
        }

        group.post("activities") { request, context in
            try await creating(request, context) { caller, bytes in
                let actor = try caller.actor()
                let body = try JSONBody.decode(ActivityBody.self, bytes: bytes, request: request)
                let deadline = try field("deadline") { try Input.date(body.deadline) }
                let priority = try field("priority") { try Input.priority(body.priority ?? "p2") }
                let name = try field("name") { try Input.name(body.name, field: "name") }
                let assignee = try field("assignee") { try Input.email(body.assignee) }
                let activity = try await store.withTenant(caller.tenant) {
                    try await $0.assignActivity(by: actor, team: body.team, assignee: assignee, name: name, deadline: deadline, priority: priority)
                }
                return try JSONBody.answer(
                    activity, status: .created,
                    headers: [.location: "/v1/activities/\(activity.id.lowercasedString)", .eTag: Self.eTag(activity)])
            }
        }

        group.get("activities/:id") { _, context in
            let caller = try context.requireCaller()
            let id = try Self.activityID(context)
            let activity = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.activity(id: id, viewer: caller.person) }
            return try JSONBody.response(activity, headers: [.eTag: Self.eTag(activity)])
        }

        // "Why (not)": every event of the activity and what became of it for each recipient
        // the caller may see (docs/notifications.md), oldest first.
        group.get("activities/:id/notifications") { request, context in
            let caller = try context.requireCaller()
            let id = try Self.activityID(context)
            let user = try request.uri.queryParameters.get("user").map { email in try field("user") { try Input.email(email) } }
            let events = try await store.withTenant(caller.tenant, readOnly: true) {
                try await $0.why(activity: id, viewer: caller.person, recipient: user)
            }
            return try JSONBody.response(["items": events])
        }

        // The app's update token for a P0 activity's Live Activity (docs/apps.md): its assignee's
        // or its manager's, for their own phone.
        group.put("activities/:id/live-activity") { request, context in
            let caller = try context.requireCaller()
            let id = try Self.activityID(context)
            let actor = try caller.actor()
            let body = try await JSONBody.decode(LiveActivityTokenBody.self, from: request, context: context)
            let token = try field("token") { try Input.token(body.token, provider: .apns) }
            let app = try body.app.map { text in try field("app") { try Input.choice(text, field: "app", as: AppKind.self) } }
            let (device, created) = try await store.withTenant(caller.tenant) {
                try await $0.keepLiveActivityToken(activity: id, viewer: actor, token: token, app: app)
            }
            return try JSONBody.response(device, status: created ? .created : .ok)
        }

        for action in ActivityAction.allCases where action != .assign {
            group.post("activities/:id/\(action.rawValue)") { request, context in
                try await transition(action, request, context)
            }
        }
    }

    /// `POST /v1/activities/{id}/start|complete|approve|reject`.
    private func transition(_ action: ActivityAction, _ request: Request, _ context: APIContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try Self.activityID(context)
        let actor = try caller.actor()
        let expected = try Self.expectedVersion(request.headers[.ifMatch])
        var reason: String?
        if action == .reject, request.headers[.contentType] != nil {
            reason = try await JSONBody.decode(ReasonBody.self, from: request, context: context).reason
        }
        let activity = try await store.withTenant(caller.tenant) { session in
            try await session.act(action, on: id, by: actor, reason: reason, expectedVersion: expected, concealingInvisible: true)
        }
        return try JSONBody.response(activity, headers: [.eTag: Self.eTag(activity)])
    }

    static func eTag(_ activity: ActivityRecord) -> String { "\"\(activity.version)\"" }

    /// The version `If-Match` names: `"3"` (or `W/"3"`); `*` or no header: any.
    static func expectedVersion(_ header: String?) throws -> Int? {
        guard let header, header.trimmingCharacters(in: .whitespaces) != "*" else { return nil }
        var text = header.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("W/") { text.removeFirst(2) }
        guard text.count >= 3, text.first == "\"", text.last == "\"", let version = Int(text.dropFirst().dropLast()) else {
            throw Problem(.badRequest, "Invalid header", detail: "If-Match takes the ETag of the activity, such as \"3\"")
        }
        return version
    }

    static func activityID(_ context: APIContext) throws -> UUID {
        // An id that is not a UUID names nothing: 404, like one that does not exist.
        guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no activity with this id") }
        return id
    }
}
