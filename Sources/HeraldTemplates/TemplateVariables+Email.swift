import Foundation
import HeraldCore

extension TemplateVariables {
    /// The names the `email` and `email.html` templates may use.
    static let emailNames: Set<String> = ["summary", "title", "body", "link", "unsubscribe", "recipient", "isP0", "isDigest"]

    /// What an email says around a notification's words (docs/templates.md#email): the words
    /// fan-out rendered for the push, where the item is, and how to stop such emails.
    public struct Email: Sendable, Equatable {
        /// The push's title and body, as fan-out rendered them.
        public var title: String
        public var body: String
        /// The item in the app (`HERALD_APP_URL` and its path).
        public var link: String
        /// The one-click address that turns this event's email off.
        public var unsubscribe: String
        /// The recipient's name.
        public var recipient: String
        public var isP0: Bool
        public var isDigest: Bool
        /// A chat message's: its title (the sender, the group) leads the subject.
        public var isChat: Bool

        public init(
            title: String, body: String, link: String, unsubscribe: String, recipient: String, isP0: Bool, isDigest: Bool = false,
            isChat: Bool = false
        ) {
            self.title = title
            self.body = body
            self.link = link
            self.unsubscribe = unsubscribe
            self.recipient = recipient
            self.isP0 = isP0
            self.isDigest = isDigest
            self.isChat = isChat
        }

        /// The body without the push's own P0 marker (an email says P0 in its own words).
        public var plainBody: String { Self.removingMarker(body) }

        /// `text` without `🔻P0🔻`, scalar by scalar (Foundation's search cost an email more than
        /// its whole message).
        static func removingMarker(_ text: String) -> String {
            let marker = Array("🔻P0🔻".unicodeScalars)
            guard text.unicodeScalars.contains(marker[0]) else { return text }
            let scalars = Array(text.unicodeScalars)
            var kept = String.UnicodeScalarView()
            var index = 0
            while index < scalars.count {
                if scalars[index] == marker[0], index + marker.count <= scalars.count, Array(scalars[index..<index + marker.count]) == marker {
                    index += marker.count
                } else {
                    kept.append(scalars[index])
                    index += 1
                }
            }
            return String(kept)
        }

        /// The body on one line without the push's own P0 marker (the subject says P0 itself),
        /// after a chat message's or a digest's title.
        public var summary: String {
            var text = String(String.UnicodeScalarView(plainBody.unicodeScalars.map { $0 == "\r" || $0 == "\n" ? " " : $0 }))
            if isChat || isDigest { text = title + ": " + text }
            return TextShortening.shorten(text.trimmingCharacters(in: .whitespaces)) { $0.unicodeScalars.count <= 150 }
        }
    }

    /// An email's values; for the HTML part each text is HTML-escaped (the template itself
    /// writes no escaping: every template renders in text mode).
    static func values(_ email: Email, html: Bool) -> [String: Any] {
        func text(_ value: String) -> String { html ? HTMLText.escaped(value) : value }
        var values: [String: Any] = [
            "summary": text(email.summary), "title": text(email.title), "body": text(email.plainBody), "link": text(email.link),
            "recipient": text(email.recipient), "isP0": email.isP0, "isDigest": email.isDigest
        ]
        if !email.unsubscribe.isEmpty { values["unsubscribe"] = text(email.unsubscribe) }
        return values
    }

    /// Sample emails for validation, P0 or not.
    static func emailSamples() -> [(String, [String: Any])] {
        [true, false].flatMap { flag in
            let email = Email(
                title: "Activity Update", body: "🔻P0🔻Nov 21, 2026 - Alice Moreau has assigned you a new activity: Ship v2.",
                link: "https://app.example.com/activities/0193", unsubscribe: flag ? "https://herald.example.com/v1/email/unsubscribe?t=x" : "",
                recipient: "Chidi Okafor", isP0: flag, isDigest: !flag)
            return [("a \(flag ? "P0 " : "")email", values(email, html: false)), ("a \(flag ? "P0 " : "")email's HTML", values(email, html: true))]
        }
    }
}
