import Foundation

/// The person's inbox (docs/inbox.md in the Herald repository): pages of items, the counts and
/// the badge, marks, and what the app reports about a push. Live changes come on the live
/// session (`LiveEvent.inboxItem`, `.inboxStatus`, `.badge`).
public struct Inbox: Sendable {
    /// Which items a page lists.
    public enum Filter: String, Sendable {
        case all, unseen, unread
    }

    let client: HeraldClient

    /// Newest first, a page at a time (`cursor`: the last page's `next`); `archived`: only the
    /// archived items instead of the others.
    public func page(_ filter: Filter = .all, archived: Bool = false, limit: Int = 50, cursor: String? = nil) async throws -> Page<InboxItem> {
        let target =
            "/v1/me/inbox"
            + query([("status", filter.rawValue), ("archived", archived ? "true" : nil), ("limit", "\(limit)"), ("cursor", cursor)])
        let (items, response) = try await client.call("GET", target, as: Items<InboxItem>.self)
        return Page(items: items.items, next: nextCursor(response.headers["link"]))
    }

    public func item(_ id: UUID) async throws -> InboxItem { try await client.call("GET", "/v1/me/inbox/\(id.lowercased)").0 }

    public func counts() async throws -> InboxCounts { try await client.call("GET", "/v1/me/inbox/counts").0 }

    /// Marks these items (1 to 200), all or nothing: an id that is none of the person's is
    /// refused (`HeraldError`, naming it) and nothing changes.
    @discardableResult
    public func mark(_ mark: InboxMark, _ ids: [UUID], device: UUID? = nil) async throws -> InboxStatusChange {
        try await client.call("POST", "/v1/me/inbox/\(mark.rawValue)", json: MarkBody(ids: ids.map(\.lowercased), before: nil, device: device)).0
    }

    /// Marks every item told at or before `before` ("mark all read").
    @discardableResult
    public func mark(_ mark: InboxMark, allBefore before: Date, device: UUID? = nil) async throws -> InboxStatusChange {
        try await client.call("POST", "/v1/me/inbox/\(mark.rawValue)", json: MarkBody(ids: nil, before: before, device: device)).0
    }

    /// From the app's notification handler when a push is tapped: reports it with the push's
    /// `notificationId` (and the button pressed, if any), which reads its item. `nil` for a
    /// push that names no notification. Reporting twice does nothing more.
    @discardableResult
    public func opened(push payload: [AnyHashable: Any], action: PushAction? = nil, device: UUID? = nil) async throws -> EngagementReport? {
        guard let id = Self.notificationID(in: payload) else { return nil }
        return try await opened(id, action: action?.transition.rawValue, device: device)
    }

    @discardableResult
    public func opened(_ notification: UUID, action: String? = nil, device: UUID? = nil) async throws -> EngagementReport {
        try await client.call("POST", "/v1/notifications/\(notification.lowercased)/opened", json: ReportBody(device: device, action: action)).0
    }

    /// From a notification service extension (or FCM's message handler): the push arrived.
    @discardableResult
    public func delivered(push payload: [AnyHashable: Any], device: UUID? = nil) async throws -> EngagementReport? {
        guard let id = Self.notificationID(in: payload) else { return nil }
        return try await client.call("POST", "/v1/notifications/\(id.lowercased)/delivered", json: ReportBody(device: device, action: nil)).0
    }

    /// The `notificationId` a push carries (in `userInfo` beside `aps`, or FCM's `data`).
    public static func notificationID(in payload: [AnyHashable: Any]) -> UUID? {
        (payload["notificationId"] as? String).flatMap(UUID.init(uuidString:))
    }

    private struct MarkBody: Encodable {
        var ids: [String]?
        var before: Date?
        var device: UUID?
    }

    private struct ReportBody: Encodable {
        var device: UUID?
        var action: String?
    }
}

extension HeraldClient {
    /// The person's inbox.
    public var inbox: Inbox { Inbox(client: self) }
}
