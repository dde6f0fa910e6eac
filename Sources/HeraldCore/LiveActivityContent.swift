import Foundation

/// One ActivityKit push about a P0 activity's Live Activity (docs/apps.md): what the lock screen
/// shows of it, and when. Fan-out writes it with the notification; the APNs request is made
/// of it (`aps.event`, `content-state`, …) instead of an alert.
public struct LiveActivityContent: Sendable, Equatable, Codable {
    /// `aps.event`.
    public enum Event: String, Sendable, Codable, CaseIterable {
        /// Push-to-start, to the tokens the apps registered with `kind: liveactivity`.
        case start
        /// A new content state, to the update tokens the apps uploaded for the activity.
        case update
        /// The activity is approved: the Live Activity ends, and leaves at `dismissalDate`.
        case end

        /// The kind its notification is recorded as in history (`liveactivity.update`, …).
        public var notificationKind: String { "liveactivity." + rawValue }
    }

    /// `attributes`: what stays the same for the Live Activity's whole life (sent at start).
    public struct Attributes: Sendable, Equatable, Codable {
        public let activityId: String
        public let name: String
        public let team: String

        public init(activityId: String, name: String, team: String) {
            self.activityId = activityId
            self.name = name
            self.team = team
        }
    }

    /// `content-state`: what changes. `waitingSince` is Unix seconds (an `Int` in the app's
    /// `ContentState`: ActivityKit decodes a `Date` as seconds since 2001).
    public struct ContentState: Sendable, Equatable, Codable {
        public let status: String
        public let assignee: String
        /// The deadline date, `YYYY-MM-DD`.
        public let deadline: String
        /// Since when the activity waits for its manager's approval, while it does.
        public let waitingSince: Int64?

        public init(status: String, assignee: String, deadline: String, waitingSince: Int64?) {
            self.status = status
            self.assignee = assignee
            self.deadline = deadline
            self.waitingSince = waitingSince
        }
    }

    /// The app's `ActivityAttributes` type, as `attributes-type` names it.
    public static let attributesType = "HeraldActivityAttributes"
    /// How long an ended Live Activity stays on the lock screen.
    public static let dismissalDelay: TimeInterval = 4 * 3600

    public let event: Event
    /// Start only.
    public let attributes: Attributes?
    public let contentState: ContentState
    /// When the event happened, Unix seconds: the phone drops an update older than the one it shows.
    public let timestamp: Int64
    /// When the lock screen marks it out of date: the end of the deadline on the assignee's clock.
    public let staleDate: Int64?
    /// End only: when the system removes it.
    public let dismissalDate: Int64?
    /// `apns-priority`: 10 for a change, 5 for reminders and escalations (Apple's budget for
    /// priority 10 is small).
    public let priority: Int

    public init(
        event: Event, attributes: Attributes?, contentState: ContentState, timestamp: Int64, staleDate: Int64?, dismissalDate: Int64?,
        priority: Int
    ) {
        self.event = event
        self.attributes = attributes
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.priority = priority
    }
}
