import Foundation

extension HeraldClient {
    /// What the caller may see, newest first, a page at a time (`cursor`: the last page's `next`).
    public func activities(_ filter: ActivityFilter = .init(), limit: Int = 50, cursor: String? = nil) async throws -> Page<Activity> {
        let target =
            "/v1/activities"
            + query([
                ("status", filter.status?.rawValue), ("team", filter.team), ("assignee", filter.assignee), ("limit", "\(limit)"),
                ("cursor", cursor)
            ])
        let (items, response) = try await call("GET", target, as: Items<Activity>.self)
        return Page(items: items.items, next: nextCursor(response.headers["link"]))
    }

    public func activity(_ id: UUID) async throws -> Activity { try await call("GET", "/v1/activities/\(id.lowercased)").0 }

    /// Moves an activity on. With `ifVersion` (the version the app showed, or a push carried),
    /// a change since then is refused with `.versionConflict` instead of acting on it.
    public func transition(_ id: UUID, _ transition: Transition, ifVersion version: Int? = nil, reason: String? = nil) async throws -> Activity {
        let headers = version.map { [(name: "If-Match", value: "\"\($0)\"")] } ?? []
        let body: [String: String]? = transition == .reject ? reason.map { ["reason": $0] } ?? [:] : nil
        return try await call("POST", "/v1/activities/\(id.lowercased)/\(transition.rawValue)", json: body, headers: headers).0
    }

    /// The update token of a P0 activity's Live Activity on this phone.
    public func registerLiveActivity(_ activity: UUID, updateToken: Data, app: DeviceRegistration.App? = nil) async throws {
        var body = ["token": updateToken.hexadecimal]
        body["app"] = app?.rawValue
        try await perform("PUT", "/v1/activities/\(activity.lowercased)/live-activity", json: body)
    }

    /// The person's switches and quiet hours.
    public func preferences() async throws -> Preferences { try await call("GET", "/v1/me/preferences").0 }

    /// Changes what `change` names, and answers the preferences after it.
    public func updatePreferences(_ change: PreferencesChange) async throws -> Preferences {
        try await call("PUT", "/v1/me/preferences", json: PreferencesBody(change)).0
    }
}

/// `PUT /v1/me/preferences`'s body: `quietHours` absent (kept), `"off"`, or the window.
struct PreferencesBody: Encodable {
    var change: PreferencesChange
    init(_ change: PreferencesChange) { self.change = change }

    enum Keys: String, CodingKey { case events, digest, conversations, quietHours, showPresence }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        if !change.events.isEmpty { try container.encode(change.events, forKey: .events) }
        var digest: [String: String] = [:]
        digest["window"] = change.digestWindow
        digest["channel"] = change.digestChannel
        if !digest.isEmpty { try container.encode(digest, forKey: .digest) }
        if !change.conversations.isEmpty { try container.encode(change.conversations, forKey: .conversations) }
        switch change.quietHours {
        case .keep: break
        case .off: try container.encode("off", forKey: .quietHours)
        case .set(let hours):
            struct Window: Encodable {
                var window: String
                var days: [String]
            }
            try container.encode(Window(window: hours.window, days: hours.days), forKey: .quietHours)
        }
        try container.encodeIfPresent(change.showPresence, forKey: .showPresence)
    }
}
