import HeraldCore

/// What a template renders: the activity events (five changes, four reminders) and the two
/// kinds of chat message.
public enum TemplateEvent: String, Sendable, CaseIterable, Codable {
    case activityAssigned = "activity.assigned"
    case activityStarted = "activity.started"
    case activityCompletionRequested = "activity.completion_requested"
    case activityApproved = "activity.approved"
    case activityRejected = "activity.rejected"
    case activityApprovalReminder = "activity.approval_reminder"
    case activityEscalated = "activity.escalated"
    case activityDeadlineSoon = "activity.deadline_soon"
    case activityOverdue = "activity.overdue"
    case chatDirect = "chat.message.direct"
    case chatGroup = "chat.message.group"
    /// The one push for the messages quiet hours held back in one conversation.
    case chatSummary = "chat.summary"
    /// The alert that starts a P0 activity's Live Activity, on the assignee's phone and the
    /// manager's (docs/apps.md): the same words for both.
    case liveActivityStart = "liveactivity.start"

    /// The template for an activity event.
    public init?(_ event: EventKind) {
        switch event {
        case .activityAssigned: self = .activityAssigned
        case .activityStarted: self = .activityStarted
        case .activityCompletionRequested: self = .activityCompletionRequested
        case .activityApproved: self = .activityApproved
        case .activityRejected: self = .activityRejected
        case .activityApprovalReminder: self = .activityApprovalReminder
        case .activityEscalated: self = .activityEscalated
        case .activityDeadlineSoon: self = .activityDeadlineSoon
        case .activityOverdue: self = .activityOverdue
        case .chatMessage: return nil
        }
    }

    public var isChat: Bool { self == .chatDirect || self == .chatGroup || self == .chatSummary }

    /// The variables a template for this event may use.
    public var variables: Set<String> {
        self == .chatSummary ? TemplateVariables.summaryNames : isChat ? TemplateVariables.chatNames : TemplateVariables.activityNames
    }
}
