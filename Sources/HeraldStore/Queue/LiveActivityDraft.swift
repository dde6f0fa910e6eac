import Foundation
import HeraldCore

/// One Live Activity push fan-out writes for an event (docs/apps.md): to the push-to-start
/// tokens of the people it starts for, or to every update token of the activity.
public struct LiveActivityDraft: Sendable {
    /// Someone a start goes to, with its alert in their words.
    public struct Start: Sendable {
        public let person: UUID
        public let app: AppKind
        public let title: String
        public let body: String

        public init(person: UUID, app: AppKind, title: String, body: String) {
            self.person = person
            self.app = app
            self.title = title
            self.body = body
        }
    }

    public let eventID: UUID
    public let activityID: UUID
    public let teamID: UUID
    public let content: LiveActivityContent
    /// A start's people; empty for an update or an end.
    public let starts: [Start]
    /// What history shows of an update or an end (nothing is shown on the phone but the Live
    /// Activity itself).
    public let title: String
    public let body: String
    public let eventAt: Date

    public init(
        eventID: UUID, activityID: UUID, teamID: UUID, content: LiveActivityContent, starts: [Start], title: String, body: String,
        eventAt: Date
    ) {
        self.eventID = eventID
        self.activityID = activityID
        self.teamID = teamID
        self.content = content
        self.starts = starts
        self.title = title
        self.body = body
        self.eventAt = eventAt
    }
}
