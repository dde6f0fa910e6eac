import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

extension HeraldAPI {
    /// `PUT /v1/me/preferences`: what it names changes, the rest stays.
    struct PreferencesBody: Decodable, FieldNamed {
        static let fieldNames: Set<String> = ["events", "digest", "conversations", "quietHours", "showPresence"]
        static let nestedFieldNames: [String: Set<String>] = [
            "events[]": ["event", "app", "mode", "enabled", "channel"], "digest": ["window", "channel"], "quietHours": ["window", "days"]
        ]

        /// One setting: `{"event", "app"?, "mode"?, "channel"?}` (or `"enabled"`, as before modes).
        struct Event: Decodable {
            let event: String
            let app: String?
            let mode: String?
            let enabled: Bool?
            let channel: String?

            init(event: String, app: String?, mode: String?, enabled: Bool?, channel: String? = nil) {
                self.event = event
                self.app = app
                self.mode = mode
                self.enabled = enabled
                self.channel = channel
            }
        }

        struct Digest: Decodable {
            let window: String?
            /// `push` or `email`.
            let channel: String?
        }

        struct Window: Decodable {
            let window: String
            let days: [String]?
        }

        /// A list of settings, or an object of event → mode for every app the event reaches.
        let events: [Event]?
        let digest: Digest?
        /// Conversation id → mode, or null to follow chat.message again.
        let conversations: [String: String?]?
        /// Absent: unchanged; `"off"` (or `null`): removed.
        let quietHours: Window??
        /// Others see them online and when last seen (the live channel).
        let showPresence: Bool?

        enum CodingKeys: String, CodingKey { case events, digest, conversations, quietHours, showPresence }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let map = try? container.decodeIfPresent([String: String].self, forKey: .events) {
                events = map.sorted { $0.key < $1.key }.map { Event(event: $0.key, app: nil, mode: $0.value, enabled: nil) }
            } else {
                events = try container.decodeIfPresent([Event].self, forKey: .events)
            }
            digest = try container.decodeIfPresent(Digest.self, forKey: .digest)
            conversations = try container.decodeIfPresent([String: String?].self, forKey: .conversations)
            showPresence = try container.decodeIfPresent(Bool.self, forKey: .showPresence)
            if !container.contains(.quietHours) {
                quietHours = .none
            } else if try container.decodeNil(forKey: .quietHours) {
                quietHours = .some(nil)
            } else if let text = try? container.decode(String.self, forKey: .quietHours) {
                guard text == "off" else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .quietHours, in: container, debugDescription: "quietHours is a window, or \"off\" to have none")
                }
                quietHours = .some(nil)
            } else {
                quietHours = .some(try container.decode(Window.self, forKey: .quietHours))
            }
        }
    }

    /// A person's own preferences and quiet hours (docs/notifications.md).
    func addPreferences(to group: RouterGroup<APIContext>) {
        group.get("me/preferences") { _, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            return try JSONBody.response(try await store.withTenant(caller.tenant) { try await $0.preferences(for: person) })
        }

        group.put("me/preferences") { request, context in
            let caller = try context.requireCaller()
            let person = try caller.actor()
            let body = try await JSONBody.decode(PreferencesBody.self, from: request, context: context)
            // Every field checked before anything is written.
            let changes = try (body.events ?? []).enumerated().map { index, item in
                let event = try field("events[\(index)].event") { try Input.choice(item.event, field: "event", as: EventKind.self) }
                let app = try field("events[\(index)].app") { try item.app.map { try Input.choice($0, field: "app", as: AppKind.self) } }
                if let app, !event.apps.contains(app) {
                    throw Problem(
                        .unprocessableContent, "Invalid fields", detail: "\(event.rawValue) never reaches the \(app.rawValue) app",
                        errors: [
                            .init(
                                field: "events[\(index)].app",
                                detail: "\(event.rawValue) reaches only the \(event.apps.map(\.rawValue).joined(separator: " and ")) app")
                        ])
                }
                let mode = try field("events[\(index)].mode") { () throws -> PushMode? in
                    if let mode = item.mode { return try PushMode.parse(mode, field: "mode") }
                    guard let enabled = item.enabled else {
                        guard item.channel != nil else { throw InputError("a setting has a mode (immediate, digest or off) or a channel") }
                        return nil
                    }
                    return enabled ? .immediate : .off
                }
                let channel = try field("events[\(index)].channel") {
                    try item.channel.map { try Input.choice($0, field: "channel", as: NotificationChannel.self) }
                }
                return (event, app, mode, channel)
            }
            let window = try body.digest?.window.map { window in try field("digest.window") { try DigestWindow.parse(window) } }
            let digestByEmail = try body.digest?.channel.map { channel in
                try field("digest.channel") { () throws -> Bool in
                    guard channel == "push" || channel == "email" else { throw InputError("a digest goes by push or email") }
                    return channel == "email"
                }
            }
            if let digest = body.digest, digest.window == nil, digest.channel == nil {
                throw Problem(
                    .unprocessableContent, "Invalid fields", detail: "a digest setting names its window, its channel or both",
                    errors: [.init(field: "digest", detail: "give window, channel or both")])
            }
            let conversations = try (body.conversations ?? [:]).sorted { $0.key < $1.key }.map { key, value in
                let id = try field("conversations") { try Input.id(key, field: "a conversation") }
                return (id, try value.map { value in try field("conversations.\(key)") { try PushMode.parse(value, field: "mode") } })
            }
            let hours: QuietHours?? = try body.quietHours.map { window in
                try window.map { window in
                    try field("quietHours") { try QuietHours.parse(window.window, days: window.days?.joined(separator: ",")) }
                }
            }
            let summary = try await store.withTenant(caller.tenant) { session in
                for (event, app, mode, channel) in changes {
                    if let mode { try await session.setPreference(event, app: app, mode: mode, for: person, by: person) }
                    if let channel { try await session.setChannel(channel, for: event, app: app, of: person) }
                }
                if let window { try await session.setDigestWindow(window, for: person) }
                if let digestByEmail { try await session.setDigestChannel(email: digestByEmail, for: person) }
                for (conversation, mode) in conversations {
                    try await session.setConversationMode(mode, conversation: conversation, for: person)
                }
                if let hours { try await session.setQuietHours(hours, for: person) }
                if let shown = body.showPresence { try await session.setShowPresence(shown, for: person) }
                return try await session.preferences(for: person)
            }
            return try JSONBody.response(summary)
        }
    }
}
