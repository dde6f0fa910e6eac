import Foundation
import HeraldCore
import HeraldPush
import HeraldStore

/// What an email delivery needs beyond the notification (docs/notifications.md#email): whose
/// address it is, the tenant's templates, and the signed one-click unsubscribe token.
extension Dispatcher {
    /// The recipient of an email delivery; nil when its device is no longer a person's address.
    func mailRecipient(for delivery: ClaimedDelivery) async throws -> MailRecipient? {
        guard let owner = try await queue.mailboxOwner(tenant: delivery.tenantID, device: delivery.deviceID) else { return nil }
        let templates = try await fanOut.templates.templates(for: delivery.tenantID) { try await queue.templateOverrides(tenant: $0) }
        // An event's email may be turned off; a digest's is the digest setting's.
        let type = delivery.content.data[.type]
        var token: String?
        if let event = EventKind.allCases.first(where: { $0.payloadType == type }) {
            let links = try await emailLinks()
            token = links.token(for: EmailLinks.Subject(tenant: delivery.tenantID, person: owner.personID, event: event, app: delivery.app))
        }
        return MailRecipient(name: owner.name, locale: owner.locale, templates: templates, unsubscribeToken: token)
    }

    /// The link key, read from the database once.
    func emailLinks() async throws -> EmailLinks {
        if let links = linkKey.withLock({ $0 }) { return links }
        let links = try await store.emailLinks()
        linkKey.withLock { $0 = links }
        return links
    }
}
