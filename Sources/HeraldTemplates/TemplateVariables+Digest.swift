import Foundation
import HeraldCore

extension TemplateVariables {
    /// The names the `digest` template may use: its own, and each item's (inside `{{#items}}`).
    static let digestNames: Set<String> = Set(["scope", "count", "one", "isChat", "items", "more", "first"] + DigestItem.names)

    /// How many of a digest's items its body names; `more` counts the rest.
    public static let digestItemsShown = 2

    /// One event a digest gathered, as the digest's words need it (stored with the gathered
    /// notification when it is gathered).
    public struct DigestItem: Sendable, Equatable, Codable {
        public var event: EventKind
        /// Who did it (an activity event).
        public var actor: String?
        /// The activity's name.
        public var name: String?
        /// Who wrote it (a chat message).
        public var sender: String?
        /// The message's preview.
        public var text: String?

        public init(event: EventKind, actor: String? = nil, name: String? = nil, sender: String? = nil, text: String? = nil) {
            self.event = event
            self.actor = actor
            self.name = name
            self.sender = sender
            self.text = text
        }

        /// The flag each event sets in its item, for the template's sections.
        static func flag(_ event: EventKind) -> String {
            switch event {
            case .activityAssigned: "assigned"
            case .activityStarted: "started"
            case .activityCompletionRequested: "completionRequested"
            case .activityApproved: "approved"
            case .activityRejected: "rejected"
            case .activityApprovalReminder: "reminder"
            case .activityEscalated: "escalated"
            case .activityDeadlineSoon: "deadlineSoon"
            case .activityOverdue: "overdue"
            case .activityUnopened: "unopened"
            case .chatMessage: "message"
            }
        }

        static let names = ["actor", "name", "sender", "text"] + EventKind.allCases.map(flag)

        /// Every name set, so a lookup inside `{{#items}}` never falls through to the digest.
        func values(first: Bool) -> [String: Any] {
            var values: [String: Any] = Dictionary(uniqueKeysWithValues: EventKind.allCases.map { (Self.flag($0), $0 == event) })
            values["first"] = first
            values["actor"] = actor ?? ""
            values["name"] = name ?? ""
            values["sender"] = sender ?? ""
            values["text"] = text.map { TextShortening.preview($0) } ?? ""
            return values
        }
    }

    /// A digest's facts: whose (the team's or the conversation's name) and what it gathered.
    public struct Digest: Sendable, Equatable {
        public var scope: String
        public var isChat: Bool
        public var items: [DigestItem]

        public init(scope: String, isChat: Bool, items: [DigestItem]) {
            self.scope = scope
            self.isChat = isChat
            self.items = items
        }
    }

    static func values(_ digest: Digest) -> [String: Any] {
        let shown = digest.items.prefix(digestItemsShown)
        var values: [String: Any] = [
            "scope": digest.scope, "count": digest.items.count, "one": digest.items.count == 1, "isChat": digest.isChat,
            "items": shown.enumerated().map { $1.values(first: $0 == 0) }
        ]
        // Absent, not 0: a section of 0 is rendered in some Mustache implementations.
        if digest.items.count > shown.count { values["more"] = digest.items.count - shown.count }
        return values
    }

    /// A digest for samples and previews: Field Ops, seven updates.
    public static let sampleDigest = Digest(
        scope: "Field Ops", isChat: false,
        items: [
            DigestItem(event: .activityStarted, actor: "Bob Lee", name: "Replace the pump seal"),
            DigestItem(event: .activityCompletionRequested, actor: "Carol Diaz", name: "Fence repair")
        ] + (1...5).map { DigestItem(event: .activityStarted, actor: "Dana Kim", name: "Round \($0)") })
}

extension MessageTemplate {
    /// Renders a digest.
    public func render(_ digest: TemplateVariables.Digest) -> RenderedMessage {
        render(TemplateVariables.values(digest))
    }
}
