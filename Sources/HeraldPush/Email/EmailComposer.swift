import Foundation
import HeraldCore
import HeraldTemplates

/// Who an email goes to beyond the address, and the words it is made with: what the
/// dispatcher adds to a notification sent to a person's address (`PushNotification.mail`).
public struct MailRecipient: Sendable, Equatable {
    public var name: String
    public var locale: String
    /// The tenant's templates (its overrides of `email` and `email.html`).
    public var templates: TenantTemplates
    /// The signed token of the one-click unsubscribe address (nil: none).
    public var unsubscribeToken: String?

    public init(name: String, locale: String, templates: TenantTemplates, unsubscribeToken: String?) {
        self.name = name
        self.locale = locale
        self.templates = templates
        self.unsubscribeToken = unsubscribeToken
    }

    /// The same person and link (the templates are the tenant's, whichever copy).
    public static func == (left: MailRecipient, right: MailRecipient) -> Bool {
        left.name == right.name && left.locale == right.locale && left.unsubscribeToken == right.unsubscribeToken
    }
}

/// A notification as an email (docs/notifications.md#email): the subject and the text part
/// from the `email` template, the HTML part from `email.html`, both around the words fan-out
/// rendered; a link to the item; `Message-ID` from the notification, and the thread of its
/// activity (or conversation, or digest) so a mail client keeps an activity's emails together.
public enum EmailComposer {
    /// Where the one-click unsubscribe address is on `herald serve`.
    public static let unsubscribePath = "/v1/email/unsubscribe"

    public static func compose(
        _ notification: PushNotification, to recipient: MailRecipient, settings: EmailSettings, now: Date
    ) throws -> EmailMessage {
        let data = notification.data
        let domain = settings.from.address.split(separator: "@").last.map(String.init) ?? "herald.invalid"
        let id = data[.notificationId] ?? UUID().uuidString.lowercased()
        let unsubscribe = recipient.unsubscribeToken.map { settings.publicURL + unsubscribePath + "?token=" + $0 }
        let words = TemplateVariables.Email(
            title: notification.title, body: notification.body, link: settings.appURL + data.path, unsubscribe: unsubscribe ?? "",
            recipient: recipient.name, isP0: notification.content.isTimeSensitive, isDigest: data.isDigest,
            isChat: !data.isDigest && data[.conversationID] != nil)
        let text = try recipient.templates.template(for: .email, locale: recipient.locale).render(words)
        let html = try recipient.templates.template(for: .emailHTML, locale: recipient.locale).render(words)
        let thread =
            data.isDigest ? nil : data[.activityId].map { "activity-\($0)@\(domain)" } ?? data[.conversationID].map { "conversation-\($0)@\(domain)" }
        return EmailMessage(
            from: settings.from, to: EmailMessage.Mailbox(address: notification.token, name: recipient.name), subject: text.title,
            text: text.body, html: html.body, messageID: "\(id)@\(domain)", thread: thread, unsubscribe: unsubscribe, date: now)
    }
}
