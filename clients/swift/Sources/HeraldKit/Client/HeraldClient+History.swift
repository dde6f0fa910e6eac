import Foundation

/// What happened to notifications (docs/history.md in the Herald repository): a member sees
/// their own, a manager their teams', an admin the tenant's; a message in a conversation the
/// caller is not in comes with its words withheld.
extension HeraldClient {
    /// Notifications, newest first, a page at a time (`cursor`: the last page's `next`).
    public func history(_ filter: HistoryFilter = .init(), limit: Int = 50, cursor: String? = nil) async throws -> Page<HistoryEntry> {
        let target =
            "/v1/history"
            + query([
                ("since", filter.since), ("status", filter.status?.rawValue), ("user", filter.user),
                ("activity", filter.activity?.lowercased), ("conversation", filter.conversation?.lowercased),
                ("event", filter.event?.rawValue), ("digest", filter.digest?.lowercased), ("limit", "\(limit)"), ("cursor", cursor)
            ])
        let (items, response) = try await call("GET", target, as: Items<HistoryEntry>.self)
        return Page(items: items.items, next: nextCursor(response.headers["link"]))
    }

    /// One notification whole: its words, its payload, every delivery and attempt.
    public func notification(_ id: UUID) async throws -> HistoryDetail { try await call("GET", "/v1/history/\(id.lowercased)").0 }

    /// Why people were or were not told of an activity, event by event (`herald why`);
    /// `user`: one recipient's only.
    public func why(_ activity: UUID, user: String? = nil) async throws -> [WhyEvent] {
        let target = "/v1/activities/\(activity.lowercased)/notifications" + query([("user", user)])
        return try await call("GET", target, as: Items<WhyEvent>.self).0.items
    }

    /// The tenant's delivery statistics (admins and keys); `since`: `24h`, `7d`, ….
    public func stats(since: String? = nil) async throws -> DeliveryStats {
        try await call("GET", "/v1/stats" + query([("since", since)])).0
    }
}
