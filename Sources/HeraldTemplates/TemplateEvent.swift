import HeraldCore

/// What a template renders: each activity event (`EventKind`, whose names these are), the two
/// kinds of chat message, the quiet hours' summary, a Live Activity's start and the digest.
public enum TemplateEvent: Hashable, Sendable, CaseIterable, Codable, RawRepresentable {
    /// An activity event's push, under the event's own name (`activity.assigned`).
    case activity(EventKind)
    case chatDirect
    case chatGroup
    /// The one push for the messages quiet hours held back in one conversation.
    case chatSummary
    /// The alert that starts a P0 activity's Live Activity, on the assignee's phone and the
    /// manager's (docs/apps.md): the same words for both.
    case liveActivityStart
    /// The one push of a person's digest (docs/notifications.md): the events it gathered.
    case digest
    /// An email's subject and text part, around a notification's words (docs/templates.md#email).
    case email
    /// An email's HTML part: its title, then the markup; every value is HTML-escaped.
    case emailHTML

    public static let allCases: [TemplateEvent] =
        EventKind.activityEvents.map(Self.activity) + [.chatDirect, .chatGroup, .chatSummary, .liveActivityStart, .digest, .email, .emailHTML]

    /// The template's name: the event's, or one of the chat's and Live Activities' own.
    public var rawValue: String {
        switch self {
        case .activity(let event): event.rawValue
        case .chatDirect: "chat.message.direct"
        case .chatGroup: "chat.message.group"
        case .chatSummary: "chat.summary"
        case .liveActivityStart: "liveactivity.start"
        case .digest: "digest"
        case .email: "email"
        case .emailHTML: "email.html"
        }
    }

    public init?(rawValue: String) {
        guard let found = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = found
    }

    /// The template for an activity event (a chat message's depends on the conversation).
    public init?(_ event: EventKind) {
        guard event != .chatMessage else { return nil }
        self = .activity(event)
    }

    public var isChat: Bool { self == .chatDirect || self == .chatGroup || self == .chatSummary }

    /// The variables a template for this event may use.
    public var variables: Set<String> {
        switch self {
        case .chatSummary: TemplateVariables.summaryNames
        case .digest: TemplateVariables.digestNames
        case .email, .emailHTML: TemplateVariables.emailNames
        default: isChat ? TemplateVariables.chatNames : TemplateVariables.activityNames
        }
    }
}
