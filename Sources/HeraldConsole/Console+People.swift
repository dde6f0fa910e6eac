import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import Hummingbird

extension Console {
    /// A person and their devices, dead tokens with the provider's reason and when. An admin
    /// (or a tenant key) sees anyone; everyone else only themselves.
    func addPeople(to console: RouterGroup<APIContext>) {
        console.get("people/:email") { request, context in
            await page {
                let session = try await requireSession(request)
                let email = try context.parameters.require("email").lowercased()
                let viewer = AccessPolicy(session.authentication.person)
                // Someone the viewer may not see is not found, like someone who does not exist (the store's rule).
                let (person, devices) = try await Self.refusingAsPages(session) {
                    try await store.withTenant(session.authentication.tenant) { tenant in
                        (try await tenant.person(email: email, viewer: viewer), try await tenant.devices(viewer: viewer, email: email))
                    }
                }
                return html(
                    "person",
                    [
                        "pageTitle": person.name, "name": person.name, "email": person.email, "emailQuery": Self.queryEscaped(person.email),
                        "locale": person.locale, "timeZone": person.timeZone, "isAdmin": person.isAdmin,
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
                            case .alert: break
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
}
