import Foundation
import HeraldCore
import HeraldStore
import HeraldTemplates

/// A digest's push (docs/notifications.md#digests), worded where every push is: the store
/// gathers and closes a digest, and asks this for its words and data.
extension FanOut {
    /// The push of `digest` in the person's language: the digest template over its items, the
    /// digest's `PushPayload`, stacked by its team or conversation, always with a sound (it is
    /// the one push of what was held back).
    @Sendable static func digestContent(_ digest: DigestToSend, templates: TenantTemplates) throws -> NotificationContent {
        let message = try templates.template(for: .digest, locale: digest.locale).render(
            TemplateVariables.Digest(scope: digest.scopeName, isChat: digest.conversationID != nil, items: digest.items.map(\.item)))
        return NotificationContent(
            title: message.title, body: message.body,
            data: .digest(
                id: digest.id, notificationIDs: digest.items.map(\.notificationID), teamID: digest.teamID, conversationID: digest.conversationID),
            badge: digest.badge, sound: true, threadID: digest.scopeID.lowercasedString)
    }
}

extension Dispatcher {
    /// How a digest's push is worded (for the store's `closeDigest`).
    public static let digestWording: DigestWording = FanOut.digestContent
}

extension Store {
    /// Closes the digests due at `now` (`closeDueDigests(…, wording:)`), their pushes worded
    /// as every push is.
    public func closeDueDigests(
        at now: Date = Date(), limit: Int = 100, deadline: Duration, templates: TemplateCatalog, tenants: [UUID] = [], email: Bool = false
    ) async throws -> [DigestClosing] {
        try await closeDueDigests(
            at: now, limit: limit, deadline: deadline, templates: templates, tenants: tenants, email: email, wording: Dispatcher.digestWording)
    }
}
