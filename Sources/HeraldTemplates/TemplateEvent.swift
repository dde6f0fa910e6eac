import HeraldCore

/// What a template renders: the five activity events and the two kinds of chat message.
public enum TemplateEvent: String, Sendable, CaseIterable, Codable {
    case activityAssigned = "activity.assigned"
    case activityStarted = "activity.started"
    case activityCompletionRequested = "activity.completion_requested"
    case activityApproved = "activity.approved"
    case activityRejected = "activity.rejected"
    case chatDirect = "chat.message.direct"
    case chatGroup = "chat.message.group"

    /// The template for an activity event.
    public init?(_ event: EventKind) {
        switch event {
        case .activityAssigned: self = .activityAssigned
        case .activityStarted: self = .activityStarted
        case .activityCompletionRequested: self = .activityCompletionRequested
        case .activityApproved: self = .activityApproved
        case .activityRejected: self = .activityRejected
        case .chatMessage: return nil
        }
    }

    public var isChat: Bool { self == .chatDirect || self == .chatGroup }

    /// The variables a template for this event may use.
    public var variables: Set<String> {
        isChat ? TemplateVariables.chatNames : TemplateVariables.activityNames
    }
}
