import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `POST /v1/me/inbox/{seen|read|archive|unseen|unread|unarchive}`: these items, or every
    /// item told at or before a time; from a device of the caller's, if they say which.
    struct InboxMarkBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["ids", "before", "device"]
        let ids: [String]?
        let before: String?
        let device: String?
    }

    /// `POST /v1/notifications/{id}/opened` and `/delivered`.
    struct EngagementBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["device", "action"]
        let device: String?
        let action: String?
    }

    /// What a mark changed: the items, what they are now, when, and the badge after it.
    struct InboxMarkAnswer: Encodable {
        let ids: [UUID]
        let status: InboxEngagement.Status
        let at: Date
        let badge: Int
    }

    /// What a report about a push did: the events it caused (none when it was reported
    /// before), and the badge after it.
    struct EngagementAnswer: Encodable {
        let notificationId: UUID
        let events: [InboxEngagement.Event]
        let badge: Int
    }

    /// The caller's inbox (docs/inbox.md): only a person has one, and only they read or change it.
    func addInbox(to group: RouterGroup<APIContext>) {
        group.get("me/inbox") { request, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            let query = request.uri.queryParameters
            let paging = try Paging(query)
            let status = try query.get("status").map { text in
                try field("status") { try Input.choice(text, field: "status", as: InboxFilter.Status.self) }
            }
            let archived = try query.get("archived").map { text -> Bool in
                guard let value = Bool(text) else {
                    throw Problem(
                        .unprocessableContent, "Invalid fields", detail: "archived is true or false",
                        errors: [.init(field: "archived", detail: "true or false")])
                }
                return value
            }
            let filter = InboxFilter(status: status ?? .all, archived: archived ?? false, limit: paging.limit + 1, after: paging.cursor)
            let entries = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.inbox(of: person, filter: filter) }
            let items = Array(entries.prefix(paging.limit))
            let next = entries.count > paging.limit ? items.last.map { PageCursor(at: $0.createdAt, id: $0.id) } : nil
            return try paging.response(items, next: next, path: "/v1/me/inbox", filters: ["status", "archived"], from: query)
        }

        group.get("me/inbox/counts") { _, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            let counts = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.inboxCounts(of: person.id) }
            return try JSONBody.response(counts)
        }

        group.get("me/inbox/:id") { _, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no inbox item with this id") }
            let item = try await store.withTenant(caller.tenant, readOnly: true) { try await $0.inboxItem(id, of: person) }
            return try JSONBody.response(item)
        }

        for change in InboxEngagement.Change.allCases {
            group.post("me/inbox/\(change.rawValue)") { request, context in
                let caller = try context.requireCaller()
                let person = try caller.actor()
                let body = try await JSONBody.decode(InboxMarkBody.self, from: request, context: context)
                let target = try Self.inboxTarget(body)
                let device = try body.device.map { text in try field("device") { try Input.id(text, field: "device") } }
                let marked: InboxStatusChange
                do {
                    marked = try await store.withTenant(caller.tenant) { try await $0.markInbox(of: person.id, change, target, device: device) }
                } catch let error as InboxUnknownItems {
                    throw Problem(
                        .unprocessableContent, "Invalid fields",
                        detail:
                            "\(error.unknown.count) of the ids \(error.unknown.count == 1 ? "is" : "are") no inbox item of yours; nothing was changed",
                        errors: error.unknown.map { .init(field: "ids[\($0.index)]", detail: "no inbox item of yours has this id") })
                }
                EngagementMetrics.count(marked)
                return try JSONBody.response(InboxMarkAnswer(ids: marked.ids, status: marked.status, at: marked.at, badge: marked.badge))
            }
        }

        group.post("notifications/:id/opened") { request, context in
            try await report(request, context) { session, id, person, device, action in
                try await session.reportOpened(id, by: person, device: device, action: action)
            }
        }
        group.post("notifications/:id/delivered") { request, context in
            try await report(request, context) { session, id, person, device, action in
                guard action == nil else { throw InputError("a push's arrival comes with no action", field: "action") }
                return try await session.reportDelivered(id, by: person, device: device)
            }
        }
    }

    /// `ids` (1 to 200, each an id) or `before` (a time), never both.
    static func inboxTarget(_ body: InboxMarkBody) throws -> InboxTarget {
        switch (body.ids, body.before) {
        case (let ids?, nil):
            guard !ids.isEmpty, ids.count <= InboxTarget.maxIDs else {
                throw Problem(
                    .unprocessableContent, "Invalid fields", detail: "ids holds 1 to \(InboxTarget.maxIDs) ids",
                    errors: [.init(field: "ids", detail: "1 to \(InboxTarget.maxIDs) ids")])
            }
            var bad: [Problem.FieldError] = []
            var parsed: [UUID] = []
            for (index, text) in ids.enumerated() {
                if let id = UUID(uuidString: text) { parsed.append(id) } else { bad.append(.init(field: "ids[\(index)]", detail: "not an id")) }
            }
            guard bad.isEmpty else { throw Problem(.unprocessableContent, "Invalid fields", detail: "ids holds ids only", errors: bad) }
            return .ids(parsed)
        case (nil, let before?):
            return .before(try field("before") { try Input.timestamp(before, field: "before") })
        case (nil, nil), (.some, .some):
            throw Problem(
                .unprocessableContent, "Invalid fields", detail: "give either ids (these items) or before (every item up to a time)",
                errors: [.init(field: "ids", detail: "either ids or before"), .init(field: "before", detail: "either ids or before")])
        }
    }

    /// A report from the app about a push of notification `id` to the caller.
    private func report(
        _ request: Request, _ context: APIContext,
        _ apply: @Sendable (TenantSession, UUID, UUID, UUID?, ActivityAction?) async throws -> InboxStatusChange
    ) async throws -> Response {
        let caller = try context.requireCaller()
        let person = try caller.actor()
        guard let id = UUID(uuidString: try context.parameters.require("id")) else { throw Problem.notFound("no notification with this id") }
        let body = try await JSONBody.decode(EngagementBody.self, from: request, context: context)
        let device = try body.device.map { text in try field("device") { try Input.id(text, field: "device") } }
        let action = try body.action.map { text in try field("action") { try Input.choice(text, field: "action", as: ActivityAction.self) } }
        let change = try await store.withTenant(caller.tenant) { try await apply($0, id, person.id, device, action) }
        EngagementMetrics.count(change)
        let events = change.happened.first { $0.notificationID == id }?.events ?? []
        return try JSONBody.response(EngagementAnswer(notificationId: id, events: events, badge: change.badge))
    }
}
