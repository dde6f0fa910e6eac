import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// A person and their devices, dead tokens with the provider's reason and when; what they
    /// chose not to be pushed at once, and their digests. An admin (or a tenant key) sees
    /// anyone; everyone else only themselves.
    func addPeople(to console: RouterGroup<APIContext>) {
        console.get("people/:email") { request, context in
            await page {
                let session = try await requireSession(request)
                let email = try context.parameters.decoded("email").lowercased()
                let viewer = AccessPolicy(session.authentication.person)
                // Someone the viewer may not see is not found, like someone who does not exist (the store's rule).
                let (person, devices, preferences, digests, teams) = try await Self.refusingAsPages(session) {
                    try await store.withTenant(session.authentication.tenant) { tenant in
                        let person = try await tenant.person(email: email, viewer: viewer)
                        return (
                            person, try await tenant.devices(viewer: viewer, email: email), try await tenant.preferences(for: person, viewer: viewer),
                            try await tenant.digests(of: person, viewer: viewer), try await tenant.memberships(of: person)
                        )
                    }
                }
                return html(
                    "person",
                    [
                        "pageTitle": person.name, "name": person.name, "email": person.email, "emailPath": pathSegment(person.email),
                        "emailQuery": Self.queryEscaped(person.email),
                        "locale": person.locale, "timeZone": person.timeZone, "isAdmin": person.isAdmin,
                        "digestWindow": preferences.digestWindow ?? DigestWindow.default.description,
                        // Those who run the tenant may take them out of a team (docs/concepts.md#people-leave-teams).
                        "teams": teams.map { ["slug": $0.team, "role": $0.role.rawValue] }, "mayChangeTeams": viewer.runsTheTenant,
                        // Their own page: the form that changes them.
                        "mine": session.authentication.person.map { AccessPolicy($0).mayChangePreferences(of: person.id) } ?? false,
                        "windows": Self.windowChoices(current: preferences.digestWindow ?? DigestWindow.default.description),
                        // Each with the value shown, so that saving writes only what the person changed.
                        "choices": preferences.entries.map { entry -> [String: Any] in
                            [
                                "name": "mode.\(entry.event.rawValue).\(entry.app.rawValue)", "event": entry.event.rawValue,
                                "app": entry.app.rawValue, "shown": entry.mode.rawValue,
                                "options": PushMode.allCases.map { ["value": $0.rawValue, "selected": $0 == entry.mode] },
                                // By push, by email or both (docs/notifications.md#email).
                                "channelName": "channel.\(entry.event.rawValue).\(entry.app.rawValue)",
                                "channelShown": (entry.channel ?? .push).rawValue,
                                "channelOptions": NotificationChannel.allCases.map {
                                    ["value": $0.rawValue, "selected": $0 == (entry.channel ?? .push)]
                                }
                            ]
                        },
                        // What is not pushed at once (everything else is).
                        "settings": preferences.entries.filter { $0.mode != .immediate }.map { entry -> [String: Any] in
                            ["event": entry.event.rawValue, "app": entry.app.rawValue, "mode": entry.mode.rawValue, "origin": entry.origin.rawValue]
                        }
                            + (preferences.conversations ?? []).map { conversation -> [String: Any] in
                                [
                                    "event": "chat.message in " + (conversation.name ?? conversation.conversationId.lowercasedString), "app": "every",
                                    "mode": conversation.mode.rawValue, "origin": "own"
                                ]
                            },
                        "digests": digests.map { digest -> [String: Any] in
                            var values: [String: Any] = [
                                "id": digest.id.lowercasedString, "app": digest.app.rawValue, "scope": digest.scope, "status": digest.status.rawValue,
                                "items": digest.items, "openedAt": Self.shown(digest.openedAt), "closesAt": Self.shown(digest.closesAt)
                            ]
                            if let reason = digest.reason { values["reason"] = reason }
                            if let notification = digest.notificationID { values["notificationID"] = notification.lowercasedString }
                            return values
                        },
                        "devices": devices.map { device -> [String: Any] in
                            var values: [String: Any] = [
                                "tokenPreview": device.tokenPreview, "isFID": device.address == .fid, "app": device.app.rawValue,
                                "platform": device.platform.rawValue, "provider": device.provider.rawValue,
                                "createdAt": Self.shown(device.createdAt), "lastSeenAt": Self.shown(device.lastSeenAt),
                                "state": device.removedAt != nil && device.deactivatedAt == nil ? "logged out" : device.state,
                                "isStale": device.state == "stale"
                            ]
                            if let at = device.deactivatedAt {
                                values["deactivatedAt"] = Self.shown(at)
                                values["reason"] = device.deactivationReason ?? "the provider said the token is dead"
                            }
                            if let at = device.removedAt { values["removedAt"] = Self.shown(at) }
                            switch device.kind {
                            case .alert, .email: break
                            case .liveActivity: values["liveActivity"] = "Live Activity push-to-start"
                            case .liveActivityUpdate:
                                values["liveActivity"] = "Live Activity of " + (device.activityID?.lowercasedString.prefix(8) ?? "")
                            }
                            return values
                        }
                    ], session: session)
            }
        }
    }

    /// The digest windows the form offers: the common ones, and the person's own whatever it
    /// is (one set by the API or the CLI, such as `daily 06:30`), selected.
    static func windowChoices(current: String) -> [[String: Any]] {
        let common = ["1m", "5m", "15m", "1h", "4h", "daily 07:00", "daily 08:00", "daily 09:00", "daily 18:00"]
        return (common.contains(current) ? common : [current] + common).map { ["value": $0, "selected": $0 == current] }
    }
}
