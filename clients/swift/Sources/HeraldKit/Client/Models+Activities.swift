import Foundation

/// A unit of work assigned to someone (docs/concepts.md in the Herald repository).
public struct Activity: Codable, Sendable, Hashable, Identifiable {
    public enum Status: OpenEnum {
        case assigned, running, completionRequested, approved
        case unknown(String)
        public static let known: [Status] = [.assigned, .running, .completionRequested, .approved]
        public var rawValue: String {
            switch self {
            case .assigned: "assigned"
            case .running: "running"
            case .completionRequested: "completion_requested"
            case .approved: "approved"
            case .unknown(let value): value
            }
        }
    }
    public var id: UUID
    public var team: TeamReference
    public var name: String
    public var priority: Priority
    /// `YYYY-MM-DD`.
    public var deadline: String
    public var status: Status
    /// Its `ETag`: a transition with `ifVersion` is refused (`.versionConflict`) once it moved on.
    public var version: Int
    public var manager: PersonReference
    public var assignee: PersonReference
    public var createdAt: Date?
    public var updatedAt: Date?
}

/// A transition of an activity (`POST /v1/activities/{id}/<transition>`).
public enum Transition: String, Sendable, CaseIterable {
    case start, complete, approve, reject
}

/// Filters of `GET /v1/activities`.
public struct ActivityFilter: Sendable, Hashable {
    public var status: Activity.Status?
    public var team: String?
    public var assignee: String?
    public init(status: Activity.Status? = nil, team: String? = nil, assignee: String? = nil) {
        self.status = status
        self.team = team
        self.assignee = assignee
    }
}

/// One page of a list, and where the next one starts (`nil`: the last page).
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var next: String?
}

/// What a person wants pushed (`GET|PUT /v1/me/preferences`).
public struct Preferences: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var event: EventKind
        public var app: AppKind
        /// `immediate`, `digest` or `off` (nil from a server older than digests).
        public var mode: String?
        public var enabled: Bool
        public var origin: String
        /// `push`, `push_only`, `both` or `email` (nil from a server older than email).
        public var channel: String?
    }
    /// A setting of one conversation, which wins over `chat.message`'s.
    public struct ConversationSetting: Codable, Sendable, Hashable {
        public var conversationId: String
        public var name: String?
        public var mode: String
    }
    public struct QuietHours: Codable, Sendable, Hashable {
        public var window: String
        public var days: [String]
        public var timeZone: String?
        public init(window: String, days: [String], timeZone: String? = nil) {
            self.window = window
            self.days = days
            self.timeZone = timeZone
        }
    }
    public var entries: [Entry]
    /// How long the digest gathers: `1m` … `4h`, or `daily HH:MM`.
    public var digestWindow: String?
    /// `push` or `email`: where the digest goes (nil from a server older than email).
    public var digestChannel: String?
    public var conversations: [ConversationSetting]?
    public var quietHours: QuietHours?
    public var showPresence: Bool?
}

/// A change to preferences: only what it names changes.
public struct PreferencesChange: Sendable, Hashable {
    public struct Switch: Codable, Sendable, Hashable {
        public var event: EventKind
        public var app: AppKind?
        /// `immediate`, `digest` or `off` (nil: unchanged).
        public var mode: String?
        /// `push` (pushed; emailed when no device can be), `push_only`, `both` or `email`
        /// (nil: unchanged): docs/notifications.md#email in the Herald repository.
        public var channel: String?
        public init(event: EventKind, app: AppKind? = nil, mode: String) {
            self.event = event
            self.app = app
            self.mode = mode
        }
        /// How the person hears of the event: by push, by email, or both.
        public init(event: EventKind, app: AppKind? = nil, channel: String) {
            self.event = event
            self.app = app
            self.channel = channel
        }
        public init(event: EventKind, app: AppKind? = nil, enabled: Bool) {
            self.init(event: event, app: app, mode: enabled ? "immediate" : "off")
        }
    }
    public enum Quiet: Sendable, Hashable {
        case keep
        case off
        case set(Preferences.QuietHours)
    }
    public var events: [Switch]
    /// The digest's window (nil: unchanged).
    public var digestWindow: String?
    /// `push` or `email` (nil: unchanged).
    public var digestChannel: String?
    /// Conversation id → mode, or nil to follow `chat.message` again.
    public var conversations: [String: String?]
    public var quietHours: Quiet
    public var showPresence: Bool?
    public init(
        events: [Switch] = [], digestWindow: String? = nil, digestChannel: String? = nil, conversations: [String: String?] = [:],
        quietHours: Quiet = .keep, showPresence: Bool? = nil
    ) {
        self.events = events
        self.digestWindow = digestWindow
        self.digestChannel = digestChannel
        self.conversations = conversations
        self.quietHours = quietHours
        self.showPresence = showPresence
    }
}
